// compas_channel_*: point-to-point channels (compas::detail::ChannelBytes, the untyped Channel).
#include <string>
#include <typeinfo>

#include "counts.hpp"
#include "handles.hpp"
#include "types.hpp"

using namespace compas::capi;

namespace {

std::size_t positive(std::int64_t v, const char* what) {
  if (v < 1)
    throw Error(COMPAS_ERR_ARG, std::string(what) + " " + std::to_string(v) + ": 1 or more");
  return static_cast<std::size_t>(v);
}

}  // namespace

extern "C" int compas_channel_create(compas_runtime* rt, int type, int64_t capacity,
                                     int64_t max_count, compas_channel** channel) {
  return guard("compas_channel_create", [&] {
    need(channel, "channel");
    *channel = nullptr;
    compas_runtime* r = live(rt, "rt");
    with_type(type, [&](auto t) {
      using T = decltype(t);
      *channel = track(new compas_channel(r, type, positive(capacity, "capacity"),
                                          positive(max_count, "max_count"), sizeof(T), typeid(T)));
    });
  });
}

extern "C" int compas_channel_destroy(compas_channel** channel) {
  return guard("compas_channel_destroy", [&] { destroy(channel, "channel"); });
}

extern "C" int compas_channel_send(compas_channel* channel, int to, const void* data,
                                   int64_t count) {
  return guard("compas_channel_send", [&] {
    compas_channel* c = live(channel, "channel");
    c->bytes.send(to, data, count_of(count, size_of(c->type), data, "data"));
  });
}

extern "C" int compas_channel_recv(compas_channel* channel, int from, void* data, int64_t room,
                                   int64_t* count) {
  return guard("compas_channel_recv", [&] {
    compas_channel* c = live(channel, "channel");
    need(count, "count");
    const std::size_t n = c->bytes.recv(from, data, count_of(room, size_of(c->type), data, "data"));
    *count = static_cast<std::int64_t>(n);
  });
}
