"""scripts/kbuild.sh: config fragments merged by merge_config.sh (needs
the work tree, build/linux-BASE, which 'make test' fetches before pytest runs)."""

import os
import subprocess

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def kbuild(tmp_path, fragments, name="t"):
    # olddefconfig: the merged .config is all this test needs, not a build.
    return subprocess.run([os.path.join(TOP, "scripts", "kbuild.sh"), name, "olddefconfig"],
                          cwd=TOP, capture_output=True, text=True,
                          env=dict(os.environ, FRAGMENT=fragments,
                                   KBUILD_OUT=str(tmp_path / "out")))


def test_fragments_given_relative_to_the_top_are_merged(tmp_path):
    r = kbuild(tmp_path, "configs/guest.config configs/hotplug.config")
    assert r.returncode == 0, r.stderr
    config = (tmp_path / "out" / ".config").read_text()
    assert "CONFIG_NUMA=y" in config and "CONFIG_ACPI_HOTPLUG_MEMORY=y" in config


def test_an_option_kconfig_drops_stops_the_build_and_is_named(tmp_path):
    frag = tmp_path / "bad.config"
    frag.write_text("# the suite without KUnit: Kconfig drops it\n"
                    "CONFIG_ZONELIST_CACHE_KUNIT_TEST=y\n")
    r = kbuild(tmp_path, f"configs/guest.config {frag}")
    assert r.returncode == 1
    assert "Kconfig did not keep options" in r.stderr
    assert "CONFIG_ZONELIST_CACHE_KUNIT_TEST" in r.stderr
