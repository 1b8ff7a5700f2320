#pragma once
// Stand-in: see rendezvous/store.h.
