"""A small pyACL program for `hflow ctxcheck`'s tests: the seed's bug from a Python thread.

  py_pool.py unbound DEV   the main thread binds DEV; a Python thread ("py-pool") then allocates,
                           copies and frees on DEV without binding (the bug)
  py_pool.py fixed DEV     the same, the thread binding DEV first
  py_pool.py cross A B     the main thread allocates on B; a thread bound to A frees it

Exit status 0 when every call succeeded, 1 when one failed (printed on stderr with its ACL code),
2 for bad arguments. Lines marked `# CTXCHECK: tag` are where the tests expect a finding.
"""
import sys
import threading

import acl

HUGE_FIRST = 0
DEVICE_TO_DEVICE = 3


def check(ret, what):
    if ret != 0:
        print(f"py_pool: {what} failed: {ret}", file=sys.stderr)
    return ret == 0


def pool_work(device, bind, ok):
    if bind and not check(acl.rt.set_device(device), "acl.rt.set_device"):
        return
    src, ret = acl.rt.malloc(256, HUGE_FIRST)  # CTXCHECK: py malloc
    if not check(ret, "acl.rt.malloc"):
        return
    dst, ret = acl.rt.malloc(256, HUGE_FIRST)
    good = check(ret, "acl.rt.malloc")
    if good:
        good = check(acl.rt.memcpy(dst, 256, src, 256, DEVICE_TO_DEVICE), "acl.rt.memcpy")
        good = check(acl.rt.free(dst), "acl.rt.free") and good
    good = check(acl.rt.free(src), "acl.rt.free") and good
    if bind:
        good = check(acl.rt.reset_device(device), "acl.rt.reset_device") and good
    ok.append(good)


def pool(device, bind):
    if not check(acl.rt.set_device(device), "main acl.rt.set_device"):
        return 1
    ok = []
    t = threading.Thread(target=pool_work, args=(device, bind, ok), name="py-pool")
    t.start()
    t.join()
    acl.rt.reset_device(device)
    return 0 if ok == [True] else 1


def cross(a, b):
    if not check(acl.rt.set_device(b), "main acl.rt.set_device"):
        return 1
    ptr, ret = acl.rt.malloc(64, HUGE_FIRST)
    if not check(ret, "acl.rt.malloc"):
        return 1
    ok = []

    def other():
        if check(acl.rt.set_device(a), "acl.rt.set_device"):
            ret = acl.rt.free(ptr)  # CTXCHECK: py cross free
            ok.append(check(ret, "acl.rt.free"))

    t = threading.Thread(target=other, name="py-other-dev")
    t.start()
    t.join()
    if ok != [True]:
        acl.rt.free(ptr)  # on its own device: the fix
    return 0 if ok == [True] else 1


def main(argv):
    if len(argv) < 3 or argv[1] not in ("unbound", "fixed", "cross"):
        print("usage: py_pool.py unbound|fixed DEV | cross A B", file=sys.stderr)
        return 2
    if not check(acl.init(), "acl.init"):
        return 1
    if argv[1] == "cross":
        status = cross(int(argv[2]), int(argv[3]))
    else:
        status = pool(int(argv[2]), argv[1] == "fixed")
    acl.finalize()
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv))
