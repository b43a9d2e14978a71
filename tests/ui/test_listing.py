"""The command line's --list tables (no Blender)."""

import glob
import os
import shutil

import characters_generate as cgen
import numpy as np
import pytest
from op2_generate import write_pair
from paths import DATA

from oban_import.outpost2.engine.draw import frame_bounds
from oban_import.outpost2.io.prt import read_prt
from oban_import.ui.cli import list_files
from oban_import.ui.listing import sprite_rows


@pytest.mark.parametrize("seed", range(4))
def test_listing_rows(tmp_path, seed):
    prt = read_prt(write_pair(tmp_path, np.random.default_rng(seed))[0])
    rows = sprite_rows(prt)
    for i, animation in enumerate(prt.animations):
        subs = [s for f in animation.frames for s in f.subframes]
        boxes = [frame_bounds(prt, i, f) for f in range(len(animation.frames)) if len(animation.frames[f].subframes)]
        box = (min(b[0] for b in boxes), min(b[1] for b in boxes), max(b[2] for b in boxes),
               max(b[3] for b in boxes)) if boxes else (0, 0, 0, 0)
        assert rows[i] == (i, len(animation.frames), len(subs), len({int(s["bitmap"]) for s in subs})) + box


def test_a_loose_tram_is_listed_with_the_body_it_would_go_onto(tmp_path, capsys):
    """The generated hero and villain beside the samples' char0 (first by name): a TRAM only the
    hero lists goes onto the hero, one both list onto the first lister, one no character beside
    it lists onto the first ONCC file, and a TRAM alone in its folder onto none; a character's own onto itself."""
    folder = cgen.write_loose(cgen.standard_scene(np.random.default_rng(3)), str(tmp_path / "both"))
    for path in glob.glob(os.path.join(DATA, "characters", "oni", "*")):
        shutil.copy(path, folder)
    alone = tmp_path / "alone"
    alone.mkdir()
    shutil.copy(os.path.join(folder, "TRAMwrap.oni"), alone)
    lone = tmp_path / "lone"
    lone.mkdir()
    for name in ("ONCCchar0.oni", "TRACchar0.oni", "TRBSchar0.oni", "TRMAchar0.oni", "TRAMwrap.oni"):
        shutil.copy(os.path.join(folder, name), lone)
    files = [os.path.join(folder, name) for name in ("TRAMwrap.oni", "TRAMwalk.oni", "TRAMchar0_walk00.oni")]
    files += [str(alone / "TRAMwrap.oni"), str(lone / "TRAMwrap.oni"), os.path.join(folder, "ONCCvillain.oni")]
    assert list_files(files, None, False) == 0
    rows = [line.split() for line in capsys.readouterr().out.splitlines()]
    bodies = {}
    for row in rows:
        if row and row[0].endswith(".oni") and len(row) > 2:
            bodies.setdefault((row[0], row[1]), []).append(" ".join(row[-2:]) if row[-1] == "beside" else row[-1])
    assert bodies[("TRAMwrap.oni", "wrap")] == ["ONCChero.oni", "none beside", "ONCCchar0.oni"]
    assert bodies[("TRAMwalk.oni", "walk")] == ["ONCChero.oni"]
    assert bodies[("TRAMchar0_walk00.oni", "char0_walk00")] == ["ONCCchar0.oni"]
    assert bodies[("ONCCvillain.oni", "walk")] == ["ONCCvillain.oni"]


def test_each_kind_the_plan_reads_is_listed_by_the_lister_of_its_name():
    """plan.KINDS and --list's LISTERS name the same kinds in the same order (as the importer's
    BUILDERS do): a kind read but never listed fails here."""
    from oban_import.oni import plan
    from oban_import.ui import cli
    assert list(cli.LISTERS) == [kind.name for kind in plan.KINDS]
    assert all(cli.LISTERS[kind.name] for kind in plan.KINDS if kind.read is not None)
