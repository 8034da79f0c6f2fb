"""The ``unshare`` level's jail, built without bubblewrap: ``python -I -S -B jail.py SPEC``.

A script, stdlib only, run by the host's own interpreter. SPEC (isolation.jail_spec,
marshalled and hex-encoded: the same interpreter reads it back with no import, where
json would cost its start-up a third) lists the binds; this builds bwrap's view:

1. new mount, pid, net, ipc and uts namespaces (and a user namespace when we are not
   root, mapping only our own uid: what lets an ordinary user mount);
2. a fresh root on a tmpfs holding only the read-only binds (system libraries, the
   interpreter, its stdlib, the worker's folder), a private /proc and a minimal /dev;
   the work dir is the only writable place; the host's tree is detached, not hidden;
3. pid 1 of the new pid namespace is this script: it starts the worker as its child
   and exits with it, and the kernel then kills whatever the cells left behind;
4. the worker drops every capability (bounding and ambient sets too), becomes the
   sandbox's throwaway uid when we are root, sets ``no_new_privs``, and execs.

Each step that fails prints one line and exits 126: the host then reports the level as
unavailable (the probe) or the worker as not started.
"""

import ctypes
import marshal
import os
import signal
import sys

CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC = 0x00020000, 0x04000000, 0x08000000
CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET = 0x10000000, 0x20000000, 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 32, 4096, 16384, 1 << 18
MS_NOATIME, MS_NODIRATIME, MS_RELATIME = 1024, 2048, 1 << 21
MNT_DETACH = 2
PR_SET_PDEATHSIG, PR_CAPBSET_DROP, PR_SET_NO_NEW_PRIVS, PR_CAP_AMBIENT = 1, 24, 38, 47
PR_CAP_AMBIENT_CLEAR_ALL = 4
# statvfs flags a remount must keep (an unprivileged user namespace may not clear them)
KEPT_FLAGS = ((os.ST_NOEXEC, MS_NOEXEC), (os.ST_NOATIME, MS_NOATIME),
              (os.ST_NODIRATIME, MS_NODIRATIME), (os.ST_RELATIME, MS_RELATIME))
SYS_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41, "riscv64": 41, "ppc64le": 203,
                  "s390x": 217}
DEVICES = ("null", "zero", "full", "random", "urandom")
BASE, NEW, OLD = "/tmp", "/newroot", "/oldroot"  # the scaffold, itself on a tmpfs

libc = ctypes.CDLL(None, use_errno=True)


class JailError(Exception):
    pass


def check(result: int, what: str) -> int:
    if result == -1:
        errno = ctypes.get_errno()
        raise JailError(f"{what}: {os.strerror(errno)}")
    return result


def mount(source: str | None, target: str, fstype: str | None, flags: int,
          data: str | None = None) -> None:
    def enc(value: str | None) -> bytes | None:
        return None if value is None else value.encode()
    check(libc.mount(enc(source), enc(target), enc(fstype), ctypes.c_ulong(flags),
                     enc(data)), f"mount {source or ''} {target}")


def pivot_root(new: str, old: str) -> None:
    machine = os.uname().machine
    number = SYS_PIVOT_ROOT.get(machine)
    if number is None:
        raise JailError(f"pivot_root: no system call number known for {machine}")
    check(libc.syscall(ctypes.c_long(number), new.encode(), old.encode()), "pivot_root")


def prctl(option: int, arg: int = 0) -> None:
    check(libc.prctl(option, ctypes.c_ulong(arg), ctypes.c_ulong(0), ctypes.c_ulong(0),
                     ctypes.c_ulong(0)), f"prctl {option}")


def write(path: str, text: str) -> None:
    with open(path, "w") as f:
        f.write(text)


def enter_namespaces(as_user: bool) -> None:
    flags = CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS
    uid, gid = os.getuid(), os.getgid()
    check(libc.unshare(flags | (CLONE_NEWUSER if as_user else 0)), "unshare")
    if as_user:  # only our own uid exists inside, as itself (as bwrap --unshare-user)
        write("/proc/self/setgroups", "deny")
        write("/proc/self/uid_map", f"{uid} {uid} 1")
        write("/proc/self/gid_map", f"{gid} {gid} 1")


def mountpoint(path: str, is_dir: bool) -> None:
    """Create ``path`` (and its missing parents: traversable, not listable)."""
    parent = os.path.dirname(path)
    if not os.path.isdir(parent):
        mountpoint(parent, True)
    if os.path.lexists(path):
        return
    if is_dir:
        os.mkdir(path)
        os.chmod(path, 0o711)
    else:
        os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o444))


def bind(source: str, dest: str, writable: bool) -> None:
    mountpoint(dest, os.path.isdir(source))
    mount(source, dest, None, MS_BIND | MS_REC)
    kept = os.statvfs(dest).f_flag
    flags = MS_REMOUNT | MS_BIND | MS_NOSUID | MS_NODEV | (0 if writable else MS_RDONLY)
    flags |= sum(ms for st, ms in KEPT_FLAGS if kept & st)
    mount(None, dest, None, flags)


def build_root(spec: dict) -> None:
    """Mount the new root and make it ``/``; the host's tree is gone afterwards."""
    mount(None, "/", None, MS_REC | MS_PRIVATE)  # nothing of ours reaches the host
    mount("tmpfs", BASE, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=1m")
    os.chdir(BASE)
    os.mkdir(NEW[1:])
    os.mkdir(OLD[1:])
    pivot_root(".", OLD[1:])  # the host's root is now /oldroot, sources read from there
    os.chdir("/")
    mount("tmpfs", NEW, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=1m")
    for link, target in spec["links"]:
        mountpoint(os.path.dirname(NEW + link), True)
        os.symlink(target, NEW + link)
    for source, dest, writable in spec["binds"]:
        bind(OLD + source, NEW + dest, writable)
    for hidden in spec["hidden"]:  # an empty, read-only folder over it (site-packages)
        mount("tmpfs", NEW + hidden, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV,
              "mode=0555,size=4k")
    mountpoint(NEW + "/proc", True)
    mount("proc", NEW + "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    mountpoint(NEW + "/dev", True)
    mount("tmpfs", NEW + "/dev", "tmpfs", MS_NOSUID | MS_NOEXEC, "mode=0755,size=4k")
    for name in DEVICES:
        if os.path.exists(f"{OLD}/dev/{name}"):
            mountpoint(f"{NEW}/dev/{name}", False)
            mount(f"{OLD}/dev/{name}", f"{NEW}/dev/{name}", None, MS_BIND)
    for name, target in (("fd", "/proc/self/fd"), ("stdin", "/proc/self/fd/0"),
                         ("stdout", "/proc/self/fd/1"), ("stderr", "/proc/self/fd/2")):
        os.symlink(target, f"{NEW}/dev/{name}")
    mount(None, NEW + "/dev", None, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NOEXEC)
    mount(None, NEW, None, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV)
    os.chdir(NEW)
    pivot_root(".", ".")  # the old root is stacked on the new one ...
    check(libc.umount2(b".", MNT_DETACH), "umount the host's root")  # ... and dropped
    os.chdir("/")


def drop_privileges(uid: int | None, last_cap: int) -> None:
    """No capability left, none to gain: the bounding and ambient sets emptied, the uid
    changed (as root), and no_new_privs (no setuid or file-capability exec gains)."""
    for cap in range(last_cap + 1):
        prctl(PR_CAPBSET_DROP, cap)
    prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL)
    if uid is not None:  # leaving uid 0 clears the permitted and effective sets
        os.setgroups([])
        os.setgid(uid)
        os.setuid(uid)
    prctl(PR_SET_NO_NEW_PRIVS, 1)


def exit_code(status: int) -> int:
    code = os.waitstatus_to_exitcode(status)
    return code if code >= 0 else 128 - code  # a signal's death, as a shell shows it


def reap(worker: int) -> int:
    """As pid 1: wait for every child; the worker's end is the jail's."""
    while True:
        try:
            pid, status = os.wait()
        except ChildProcessError:
            return 1
        if pid == worker:
            return exit_code(status)


def init(spec: dict) -> int:
    """pid 1 of the new pid namespace: build the root, start the worker, outlive it."""
    prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    with open("/proc/sys/kernel/cap_last_cap") as f:
        last_cap = int(f.read())
    check(libc.sethostname(b"sandbox", 7), "sethostname")
    build_root(spec)
    worker = os.fork()
    if worker == 0:
        try:
            drop_privileges(spec["uid"], last_cap)
            os.chdir(spec["workdir"])
            os.execve(spec["argv"][0], spec["argv"], dict(os.environ))
        except (OSError, JailError) as exc:
            os._exit(failed(exc))
    for fd in spec["fds"]:  # only the worker speaks the protocol: its death is EOF
        os.close(fd)
    return reap(worker)


def main(argv: list[str]) -> int:
    spec = marshal.loads(bytes.fromhex(argv[1]))
    host = os.getppid()
    try:
        prctl(PR_SET_PDEATHSIG, signal.SIGKILL)  # the host died: so does the jail
        if os.getppid() != host:
            return 1
        enter_namespaces(as_user=os.geteuid() != 0)
    except (OSError, JailError) as exc:
        return failed(exc)
    child = os.fork()  # the first child of an unshared pid namespace is its pid 1
    if child == 0:
        try:
            code = init(spec)
        except (OSError, JailError) as exc:
            code = failed(exc)
        os._exit(code)
    for fd in spec["fds"]:
        os.close(fd)
    return exit_code(os.waitpid(child, 0)[1])


def failed(exc: Exception) -> int:
    print(f"deskmate jail: {exc}", file=sys.stderr, flush=True)
    return 126


if __name__ == "__main__":
    sys.stderr.flush()
    os._exit(main(sys.argv))  # no interpreter teardown: the worker's end is the jail's
