#!/usr/bin/env python3
"""The long fuzz run of one reader (docs/bad_input.md, "Fuzzing"); tests/oni/io/test_oban_fuzz.py is the short one.

    tools/fuzz.py --reader raw|oni|dat|xml [--seconds N] [--engine atheris|hypothesis]
                  [--work DIR] [-- LIBFUZZER_ARGS...]

Every input must read cleanly or raise ObanError (message starting with the path),
within max(1 MiB, 6 x the file size) of tracemalloc peak (atheris also fails one that
takes over its -timeout): the property
of tests/oni/io/test_oban_fuzz.py (read_within_limits), which this reuses with its seed files.

atheris (coverage-guided libFuzzer, `pip install atheris`) is used when it imports;
it starts from the seed files (WORK/corpus, which keeps what it finds interesting
for the next run) with a dictionary of tags, names and boundary values, runs in
rounds of ROUND seconds (a fresh process each: see run_atheris_in_rounds), and stops
at the first failure, leaving the input in WORK/crashes/. Without atheris (or with
--engine hypothesis), the strategies of tests/oni/io/test_oban_fuzz.py run with random seeds in
batches until the time is up; each failing input, shrunk, goes to WORK/crashes/.
Exit code 0 when nothing failed, 1 otherwise. A crasher, once fixed, belongs in
tests/data/regressions/ with its reader's extension (atheris names it crash-SHA1).
"""

import argparse
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
import tracemalloc

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [ROOT, os.path.join(ROOT, "tests", "oni", "io"), os.path.join(ROOT, "tests", "fixtures"),
                os.path.join(ROOT, "tools", "generate")]

from oban_import.oni.io.container.container import CHECKSUMS, OBAN_TAG, SIGNATURE, VERSIONS  # noqa: E402
from oban_import.oni.io.oban.record import FLAGS  # noqa: E402

ROUND = 300  # seconds of one atheris process
EXTENSIONS = {"raw": ".oban", "oni": ".oni", "dat": ".dat", "xml": ".xml"}
DICTIONARY = {
    "binary": [OBAN_TAG, *VERSIONS, *(c.to_bytes(8, "little") for c in CHECKSUMS),
               SIGNATURE.to_bytes(8, "little"), b"\xff\xff", b"\xff\xff\xff\xff", b"\x00\x00\x80\x7f",
               b"\x00\x00\xc0\x7f", b"\x00\x00\x80\x3f", b"\x01\x00\x00\x00", b"\x08\x00\x00\x00", b"OBAN", b"\x00"],
    "xml": [b"<Oni>", b"</Oni>", b'<OBAN id="0">', b"</OBAN>", b'type="OBAN"', b"<Flags>", b"</Flags>",
            b"<InitialTransform>", b"<BaseTransform>", b"<FrameLength>", b"<FrameCount>", b"<HalfStopFrame>",
            b"<KeyFrames>", b"<OBANKeyFrame>", b"<Rotation>", b"<Translation>", b"<Time>", b"</Time>",
            *(flag.xml.encode() for flag in FLAGS), b"None",
            b"<!DOCTYPE Oni [", b'<!ENTITY a "', b"&a;", b"&#0;", b"<![CDATA[", b"]]>", b"<!--", b"-->", b"<?",
            b'encoding="utf-16"', b"nan", b"-inf", b"1e39", b"4294967296", b"65536", b"0000000000", b"\xef\xbb\xbf"],
}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--reader", required=True, choices=sorted(EXTENSIONS))
    p.add_argument("--seconds", type=int, default=600)
    p.add_argument("--engine", choices=("atheris", "hypothesis"), default=None,
                   help="default: atheris if it imports, else hypothesis")
    p.add_argument("--work", default=None, help="corpus and crashes (default: $TMPDIR/oban-fuzz/READER)")
    p.add_argument("libfuzzer", nargs="*", help="after --: more libFuzzer options (atheris only)")
    p.add_argument("--child", metavar="SCRATCH", help=argparse.SUPPRESS)  # one atheris round, inputs in SCRATCH
    args = p.parse_args(argv)
    engine = args.engine or ("atheris" if _has_atheris() else "hypothesis")
    work = args.work or os.path.join(tempfile.gettempdir(), "oban-fuzz", args.reader)
    os.makedirs(os.path.join(work, "crashes"), exist_ok=True)
    scratch = "/dev/shm" if os.access("/dev/shm", os.W_OK) else work  # each input is written to a file
    tracemalloc.start()  # once: read_within_limits then only resets the peak (tests/fixtures/limits.py)
    if args.child:
        return run_atheris(args.reader, args.seconds, work, args.child, args.libfuzzer)
    print(f"fuzzing the {args.reader} reader with {engine} for {args.seconds} s; work folder {work}", flush=True)
    if engine == "atheris":
        return run_atheris_in_rounds(args, work, scratch)
    return run_hypothesis(args.reader, args.seconds, work, scratch)


def run_atheris_in_rounds(args, work, scratch):
    """atheris in a fresh process every ROUND seconds: under atheris the process grows by
    about a kilobyte per input (not so without it), which libFuzzer's RSS limit would end
    up reporting as a crash. The corpus carries over from round to round."""
    end = time.monotonic() + args.seconds
    folder = tempfile.mkdtemp(prefix="oban-fuzz-", dir=scratch)  # libFuzzer exits without cleaning up
    try:
        while (left := int(end - time.monotonic())) > 0:
            seconds = min(left, ROUND)
            code = subprocess.call([sys.executable, os.path.abspath(__file__), "--child", folder, "--reader",
                                    args.reader, "--seconds", str(seconds), "--work", work, "--", *args.libfuzzer])
            if code:
                print(f"failed: the input is in {os.path.join(work, 'crashes')}", flush=True)
                return 1
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    print(f"done: {args.seconds} s, no failure")
    return 0


def _has_atheris():
    try:
        import atheris  # noqa: F401
    except ImportError:
        return False
    return True


def _input_path(folder, reader):
    name = {"raw": "00010-fuzz", "oni": "OBANfuzz", "dat": "level1_Final", "xml": "OBANfuzz"}[reader]
    return os.path.join(folder, name + EXTENSIONS[reader])


def _seed_files(reader):
    import test_oban_fuzz
    seeds = test_oban_fuzz.SEEDS[reader]
    return [s.encode("utf-8") if isinstance(s, str) else s for s in seeds]


def run_atheris(reader, seconds, work, folder, extra):
    import atheris
    import numpy  # noqa: F401  (not instrumented: only the project's own code is)
    with atheris.instrument_imports(include=["oban_import"]):
        import oban_import.oni.io.oban.read  # noqa: F401  (and the container, OBAN and XML readers it imports)
    import test_oban_fuzz

    corpus = os.path.join(work, "corpus")
    os.makedirs(corpus, exist_ok=True)
    for data in _seed_files(reader):
        with open(os.path.join(corpus, hashlib.sha1(data).hexdigest()), "wb") as f:
            f.write(data)
    dictionary = os.path.join(work, "dictionary")
    with open(dictionary, "w") as f:
        for i, token in enumerate(DICTIONARY["xml" if reader == "xml" else "binary"]):
            f.write(f'kw{i}="' + "".join(f"\\x{b:02x}" for b in token) + '"\n')
    path = _input_path(folder, reader)

    def one_input(data):
        with open(path, "wb") as f:
            f.write(data)
        test_oban_fuzz.read_within_limits(path)
        test_oban_fuzz.read_within_limits(path, "*o*")  # the name filter's paths too

    atheris.Setup([sys.argv[0], corpus, f"-max_total_time={seconds}", "-timeout=10", "-rss_limit_mb=4096",
                   f"-dict={dictionary}", f"-artifact_prefix={os.path.join(work, 'crashes')}/",
                   "-print_final_stats=1", *extra], one_input)
    atheris.Fuzz()  # exits the process: 0 when the time ran out, non-zero on a crash


def run_hypothesis(reader, seconds, work, scratch):
    import test_oban_fuzz
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import strategies as st

    strategy = {"raw": test_oban_fuzz.mutated_binary(test_oban_fuzz.SEEDS["raw"], [".oban", ".OBAN"]),
                "oni": test_oban_fuzz.mutated_binary(test_oban_fuzz.SEEDS["oni"], [".oni"]),
                "dat": test_oban_fuzz.mutated_binary(test_oban_fuzz.SEEDS["dat"], [".dat"]),
                "xml": test_oban_fuzz.mutated_xml()}[reader]
    folder = tempfile.mkdtemp(prefix="oban-fuzz-", dir=scratch)
    last_failure = {}
    crashes = []
    examples = [0]

    @settings(max_examples=2000, deadline=None, database=None, derandomize=False, print_blob=True,
              suppress_health_check=list(HealthCheck), phases=[Phase.generate, Phase.shrink])
    @given(case=strategy, name_glob=st.sampled_from(test_oban_fuzz.GLOBS))
    def batch(case, name_glob):
        examples[0] += 1
        try:
            test_oban_fuzz.replay(folder, reader, *case, name_glob)
        except BaseException:
            last_failure.update(case=case, name_glob=name_glob, error=traceback.format_exc(limit=3))
            raise

    end = time.monotonic() + seconds
    try:
        while time.monotonic() < end:
            try:
                batch()
            except Exception:
                data, extension = last_failure["case"]
                name = f"{reader}-{hashlib.sha1(data).hexdigest()[:12]}{extension or '.bin'}"
                target = os.path.join(work, "crashes", name)
                with open(target, "wb") as f:
                    f.write(data)
                crashes.append(target)
                print(f"FAILED (name filter {last_failure['name_glob']!r}): {target}\n{last_failure['error']}",
                      flush=True)
            print(f"{examples[0]} examples, {len(crashes)} failure(s), {max(0, end - time.monotonic()):.0f} s left",
                  flush=True)
    finally:
        for name in os.listdir(folder):
            os.remove(os.path.join(folder, name))
        os.rmdir(folder)
    print(f"done: {examples[0]} examples, {len(crashes)} failure(s)" + "".join(f"\n  {c}" for c in crashes))
    return 1 if crashes else 0


if __name__ == "__main__":
    sys.exit(main())
