// HFLOW_FAST_TLS: the initial-exec TLS model for one thread_local.
//
// Note [TLS model]
// The per-message paths read thread_locals (the bound context, the
// delivery sink, the executor's hand-off, the recycling allocator's free
// lists). In a shared library each read is a __tls_get_addr call (3% of a
// chain's profile); initial-exec makes it one load. It is asked for per
// variable, never for whole libraries (-ftls-model=initial-exec): that
// also made every access to libstdc++'s own thread_locals (std::call_once's)
// initial-exec, and a process that had loaded libstdc++ by dlopen first
// (Python after `import torch`) could then not load hflow at all ("libstdc++
// .so.6: cannot allocate memory in static TLS block": a library's TLS, once
// used dynamically, can never move into the static block). hflow's own
// initial-exec TLS is reserved when the library loads: linked (as C++
// programs are), any size works; dlopened (Python), it must fit glibc's
// spare static TLS (rtld.optional_static_tls, 512 bytes by default, shared
// with whatever the process loaded before). So the marked variables stay
// few and small (pointers, counters); strings and larger per-thread state
// use the default model, or live on the heap behind one pointer
// (sim::ThreadCache).
//
// Thread-safety: a macro.
#ifndef HFLOW_UTIL_FAST_TLS_H_
#define HFLOW_UTIL_FAST_TLS_H_

#define HFLOW_FAST_TLS __attribute__((tls_model("initial-exec")))

#endif  // HFLOW_UTIL_FAST_TLS_H_
