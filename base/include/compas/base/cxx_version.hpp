// compas's headers are C++20: an older language standard is said at once, in words, instead of
// as a page of errors from the first concept or span it meets.
#pragma once

#if !defined(__cplusplus) || __cplusplus < 202002L
#error "compas needs C++20: compile with -std=c++20 or later (g++ 12 and clang 14 default to C++17)"
#endif
