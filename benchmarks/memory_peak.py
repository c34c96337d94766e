"""Resident memory of the current process, for the benchmarks' worker processes."""

import resource


def status_mib(key):
    """The ``key`` line (``"VmRSS:"``, ``"VmHWM:"``, ...) of /proc/self/status in MiB;
    NaN when the line or the file is missing."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith(key):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")


def peak_mib():
    """This process's peak resident set in MiB: ``VmHWM``, which starts afresh at
    ``exec``, as ``/usr/bin/time -v``'s "Maximum resident set size".

    ``getrusage(RUSAGE_SELF).ru_maxrss`` does not: a worker started from a larger
    parent reports the parent's peak for as long as it stays below it (an earlier
    ``bench_segment_memory.py`` read a 455 MiB baseline that was really 304 MiB).
    Falls back to it where /proc is missing."""
    peak = status_mib("VmHWM:")
    if peak == peak:  # not NaN
        return peak
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
