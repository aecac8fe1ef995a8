// Text from outside (a file's bytes inside a parser's message, a name from a JSON file) made safe
// for a terminal: valid UTF-8 stays as it is, every other byte and every control character but
// newline and tab becomes \xNN, so no input can send escape sequences or broken bytes to a user's
// terminal.
#pragma once

#include <string>
#include <string_view>

namespace compas::app {

std::string printable(std::string_view text);

}  // namespace compas::app
