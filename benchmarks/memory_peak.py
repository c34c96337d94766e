"""Peak resident memory of the current process, for the benchmarks' worker processes."""

import resource


def peak_mib():
    """This process's peak resident set in MiB: ``VmHWM`` of /proc/self/status, which
    starts afresh at ``exec``, as ``/usr/bin/time -v``'s "Maximum resident set size".

    ``getrusage(RUSAGE_SELF).ru_maxrss`` does not: a worker started from a larger
    parent reports the parent's peak for as long as it stays below it (an earlier
    ``bench_segment_memory.py`` read a 455 MiB baseline that was really 304 MiB).
    Falls back to it where /proc is missing."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
