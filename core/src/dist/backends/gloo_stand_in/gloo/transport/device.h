#pragma once
// Stand-in: see rendezvous/store.h. Only pointers to these types are held.
namespace gloo::transport {
class Device;
class UnboundBuffer;
}  // namespace gloo::transport
