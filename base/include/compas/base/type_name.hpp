// Types named the same in every process of a program: the collectives with a caller's operator
// carry an id of the element type and of the operator in their headers, and DistArray compares
// its element type between processes; both name the two sides when processes differ.
#pragma once

#include <cstdint>
#include <string>
#include <typeinfo>

namespace compas::base {

// The readable name of a type: "double", "long", "compas::op::sum",
// "main::{lambda(double, double)#1}" (the demangled name; the mangled one where that fails).
std::string type_name(const std::type_info& type);

// A 64-bit id of a type, the same in every process of one program: FNV-1a of its mangled name.
// (std::type_info::hash_code promises no more than one process.) Distinct closures of one
// function have distinct ids: their mangled names number them.
std::uint64_t type_id(const std::type_info& type);

}  // namespace compas::base
