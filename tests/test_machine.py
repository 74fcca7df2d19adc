"""What a run records of its machine: the fingerprint's fields read from /proc, the class runs are grouped by, the
stolen share, the speed index and how a title tells them."""

from __future__ import annotations

from harness.results.machines import Fingerprint, Machine, Speed
from harness.run.machine import cpuinfo, fingerprint, speed, steal_share, steal_ticks

CPUINFO = """processor\t: 0
vendor_id\t: AuthenticAMD
cpu family\t: 25
model\t\t: 17
model name\t: AMD EPYC
stepping\t: 1
microcode\t: 0x1000065

processor\t: 1
vendor_id\t: GenuineIntel
"""


def test_cpuinfo_reads_the_first_processor_and_the_class_names_cpu_and_cores() -> None:
    found = cpuinfo(CPUINFO)
    assert (found["vendor_id"], found["cpu family"], found["model"], found["stepping"]) == (
        "AuthenticAMD",
        "25",
        "17",
        "1",
    )
    raw = Fingerprint("AuthenticAMD", "25", "17", "1", cores_seen=2)
    assert raw.machine_class == "AuthenticAMD 25/17/1, 2 cores"
    here = fingerprint()
    assert set(here) >= {"vendor", "microcode", "cache", "flags", "kernel", "clocksource", "cores_seen"}
    assert Fingerprint(**here).to_json() == here  # read back by the type that names its fields


def test_the_stolen_share_is_steal_over_all_ticks_between_two_readings() -> None:
    before = steal_ticks("cpu  100 0 50 800 0 0 0 50 0 0\n")
    after = steal_ticks("cpu  200 0 100 1600 0 0 0 100 0 0\n")
    assert before == (50, 1000) and after == (100, 2000)
    assert steal_share(before, after) == 0.05
    assert steal_share(after, after) is None


def test_the_speed_index_times_both_loops_and_reads_as_a_phrase() -> None:
    found = speed()
    assert found["python_seconds"] > 0 and found["native_seconds"] > 0
    said = Machine(Fingerprint("AuthenticAMD", "25", "17", "1"), {"start": Speed(0.3, 0.1)}).speed_text
    assert said == "Python loop 0.30 s, native 0.10 s (start)"
