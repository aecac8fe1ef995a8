// A header for porting_calls_check.py's own test (layout.porting_calls_finds_gaps): what counts as
// a public call and what does not. The table (table.md) names all but Widget::grow, and names
// Widget::shrink, which is declared nowhere.
#pragma once

namespace compas {

namespace detail {
void hidden(int x);  // detail: not public
class Base {
 public:
  int size() const { return 1; }  // public through Widget, which derives from it
};
class Machinery {
 public:
  void run();  // detail, and no public class derives from it
};
}  // namespace detail

template <class T>
class Widget : public detail::Base {
 public:
  explicit Widget(int n) : n_(n) {}
  Widget(const Widget&) = delete;  // deleted: not a call
  void grow(int by) { n_ += by; }
  T& operator()(int i) { return data_[i]; }
  friend void swap(Widget& a, Widget& b) noexcept {}
  std::string name = "w";  // a member variable with an initialiser
  struct Handle {
    void operator()(int i) const {}
  };

 private:
  void secret() {}
  int n_ = 0;
  T* data_ = nullptr;
};

template <class T>
Widget(T) -> Widget<T>;  // a deduction guide: not a call

template <class T>
requires(sizeof(T) > 1) void make_widgets(int count, const char* text = "a;b{c}");

template <class T>
[[deprecated("use make_widgets")]] void old_make_widgets(int count);  // a forwarder: not a call

inline int helper(int x) {
  auto f = [](int y) { return y + 1; };  // a body: nothing inside counts
  return f(x);
}

}  // namespace compas
