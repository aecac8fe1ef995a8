// Whether this test binary is built with AddressSanitizer or ThreadSanitizer: tests that need an
// optimised build to stay quick (the larger CG classes) take a smaller case there.
#pragma once

namespace compas::test {

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
inline constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
inline constexpr bool kSanitized = true;
#else
inline constexpr bool kSanitized = false;
#endif
#else
inline constexpr bool kSanitized = false;
#endif

}  // namespace compas::test
