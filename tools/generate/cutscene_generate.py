"""A generated level with a long cutscene (docs/cutscenes.md, docs/stage.md) for the cutscene
benchmark: one level .dat + .raw (VR31, every instance in one container, as the game's and
OniSplit's levels are) and a .bsl of one function that plays on all of it.

The level (level_generate's ONLV, AKEV, BINACJBO lists and OBOA; characters_generate's ONCC,
TRBS, TRAC and TRAMs; objects_generate's meshes, textures and container writer, grafted into
one `Instances`):

- an environment of a few quads (a floor, four walls, two panels), the two panels given script
  ids 11 and 12 in the AKEV's script-id table (its two IDXA arrays at +0x28 and +0x2C);
- an OBOA of `objects` placed objects with script ids 101.., each a small mesh of its own, the
  first half with an OBAN of their own (every third of those looping);
- camera OBANs (`CAMERAS` frame counts), box OBANs for the characters, spare OBANs the script
  gives placed objects (env_setanim);
- one character class (ONCC `bench_class`, its 19-part body, a TRMA, a TRAC of `TRAMS`
  animations) and `characters` CHAR objects of that class (the first flagged IsPlayer, the
  others named actor1..), FLAG objects 7001..;
- `IGMD/bench/bench_cutscene.bsl` beside the level (where the game looks for the ONLV `bench`'s
  scripts): `bench`, about `ticks` ticks long, forking one function per character (chr_envanim,
  chr_animate with and without a frame count, chr_teleport, sleep, again and again) and one for
  the placed objects (obj_create, env_anim, env_setanim, obj_kill), itself running the camera
  (cm_anim, cm_anim_block, cm_wait, cm_interpolate), env_show and sound_dialog_play (lines the
  level lacks: they play nothing and wait for nothing).

    write_cutscene(folder, seed=1) -> Generated(level, scripts, function, ticks, counts)
    python tools/generate/cutscene_generate.py FOLDER [--ticks N] [--seed S]
"""

import os
import struct
import sys
from dataclasses import dataclass

import numpy as np

if __name__ == "__main__":   # run as a script: the repository and this folder on the path
    sys.path[:0] = [os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                    os.path.dirname(os.path.abspath(__file__))]

import characters_generate as cg  # noqa: E402
import level_generate as lg  # noqa: E402
from oban_generate import random_animation  # noqa: E402
from objects_generate import GenObject, counted, link, random_mesh, random_texture, write_level_files  # noqa: E402

from oban_import.oni.io.oban.record import LOOP, record_bytes  # noqa: E402

LEVEL_NAME, FILE_NAME, FUNCTION = "bench", "level20_Final", "bench"
CLASS, BODY = "bench_class", "bench_body"
CAMERAS = (300, 450, 600, 800, 1000, 1200)          # camera OBANs' frame counts
BOXES = (120, 180, 240, 300)                        # the characters' box OBANs (chr_envanim)
TRAMS = (60, 120, 200, 300, 400)                    # the class's TRAMs
SPARE = (80, 150, 240, 320)                         # OBANs the script gives placed objects
FIRST_SCRIPT_ID, FIRST_FLAG = 101, 7001
QUAD_SCRIPT_IDS = (11, 12)                          # the two panels' script ids
INTERPOLATION = 40                                  # ticks of each cm_interpolate between shots
IS_PLAYER = 0x1
CHAR_SIZE, FLAG_SIZE = 0x1FC, 0x88                  # a CHAR's and a FLAG's own data (level_rebuild/object_xml.py)


@dataclass
class Generated:
    level: str          # the .dat
    scripts: str        # the folder of the .bsl
    function: str
    ticks: int          # the function's length as written here (plan_cutscene's tracks.length)
    counts: dict


# --- object list records ---------------------------------------------------------------------

def _text(value, size):
    return value.encode("latin-1")[:size].ljust(size, b"\0")


def char_payload(class_name, name, flags=0, team=0) -> bytes:
    """A CHAR's own data (0x1FC bytes from the object's byte 0x24): flags 0x00, class 0x04 (64),
    name 0x44 (32), weapon 0x64 (64), scripts 0xA4.. (8 x 32), job 0x1A8, patrol path 0x1AC
    (-1: none), team 0x1CC; the rest 0, as OniSplit's -create:level writes a plain character."""
    data = bytearray(CHAR_SIZE)
    struct.pack_into("<I", data, 0x00, flags)
    data[0x04:0x44] = _text(class_name, 64)
    data[0x44:0x64] = _text(name, 32)
    struct.pack_into("<Ih", data, 0x1A8, 0, -1)
    struct.pack_into("<I", data, 0x1CC, team)
    return bytes(data)


def flag_payload(flag_id, note="", color=0xFFFFFFFF, prefix=0) -> bytes:
    """A FLAG's own data (0x88 bytes): colour, prefix, flag id, note (128)."""
    return struct.pack("<Ihh", color, prefix, flag_id) + _text(note, 128)


# --- the level -------------------------------------------------------------------------------

def _environment():
    """A room 400 x 80 x 400: floor, four walls, two 20 x 20 panels (quads 5 and 6)."""
    corners = [(0, 0, 0), (400, 0, 0), (400, 0, 400), (0, 0, 400)]
    points = corners + [(x, 80, z) for x, _, z in corners]
    points += [(40, 0, 300), (40, 20, 300), (60, 20, 300), (60, 0, 300),
               (300, 0, 40), (300, 0, 60), (300, 20, 60), (300, 20, 40)]
    quads = [(0, 1, 2, 3), (0, 4, 5, 1), (1, 5, 6, 2), (2, 6, 7, 3), (3, 7, 4, 0), (8, 9, 10, 11), (12, 13, 14, 15)]
    count = len(quads)
    return lg.GenEnvironment(
        name=LEVEL_NAME, points=np.array(points, np.float32),
        uvs=np.array([(0, 0), (1, 0), (1, 1), (0, 1)], np.float32), quad_points=np.array(quads, np.int32),
        quad_uvs=np.tile(np.arange(4, dtype=np.int32), (count, 1)), shades=np.full((count, 4), 0xFFFFFFFF, np.uint32),
        flags=np.zeros(count, np.uint32), tags=np.full(count, -1, np.int32),
        quad_textures=np.array([1, 0, 0, 0, 0, 2, 2], np.uint16),
        planes=np.array([[0, 1, 0, 0]], np.float32), collision_planes=np.zeros(count, np.int32),
        collision_boxes=np.zeros((count, 6), np.float32), textures=["bench_wall", "bench_floor", "bench_panel"],
        bounding_box=(0, 0, 0, 400, 80, 400))


def _oban(rng, name, frames, flags=0, keys=None):
    return random_animation(rng, name, frames=frames, key_count=keys or max(2, frames // 10), flags=flags,
                            base="identity")


def build_level(rng, characters=5, objects=20):
    """(GenLevel, CharacterScene, the OBANs no placed object sets up, names): what the level holds."""
    level = lg.GenLevel(name=LEVEL_NAME, setups=[])
    for name, fmt in (("bench_wall", 8), ("bench_floor", 0), ("bench_panel", 9), ("bench_crate", 8)):
        texture, raw = random_texture(rng, name, fmt, 16, 16)
        level.textures[name], level.texture_raws[name] = texture, raw
    level.environment = _environment()
    names = {"cameras": [f"bench_cam{k}" for k in range(len(CAMERAS))],
             "boxes": [f"bench_box{k}" for k in range(len(BOXES))],
             "spare": [f"bench_prop{k}" for k in range(len(SPARE))],
             "trams": [f"bench_anim{k}" for k in range(len(TRAMS))],
             "characters": ["0"] + [f"actor{k}" for k in range(1, characters)],
             "flags": [FIRST_FLAG + k for k in range(4)],
             "script_ids": list(range(FIRST_SCRIPT_ID, FIRST_SCRIPT_ID + objects))}
    loose = [_oban(rng, n, f) for n, f in zip(names["cameras"], CAMERAS)]
    loose += [_oban(rng, n, f) for n, f in zip(names["boxes"], BOXES)]
    loose += [_oban(rng, n, f, LOOP if k % 2 else 0) for k, (n, f) in enumerate(zip(names["spare"], SPARE))]
    for k, script_id in enumerate(names["script_ids"]):
        mesh = f"bench_obj{k:02d}"
        level.meshes[mesh] = random_mesh(rng, mesh, "bench_crate", strips=4, points=16)
        position = (float(rng.uniform(40, 360)), 0.0, float(rng.uniform(40, 360)))
        animation = None
        if k < objects // 2:
            animation = f"bench_objanim{k:02d}"
            level.animations[animation] = _oban(rng, animation, int(rng.integers(100, 400)), LOOP if k % 3 == 0 else 0)
        level.setups.append(GenObject(
            f"bench_object{k:02d}", [mesh], animation, flags=0x200, physics=3 if animation else 1,
            script_id=script_id, position=position, origin=(1, 0, 0, 0, 1, 0, 0, 0, 1, *position)))
    level.lists["Character"] = [
        lg.GenObjectEntry("CHAR", 1 + k, 0, (float(60 + 60 * k), 0.0, 100.0), (0.0, float(rng.uniform(0, 360)), 0.0),
                          char_payload(CLASS, "hero" if k == 0 else key, IS_PLAYER if k == 0 else 0))
        for k, key in enumerate(names["characters"])]
    level.lists["Flag"] = [
        lg.GenObjectEntry("FLAG", 100 + k, 0, (float(rng.uniform(40, 360)), 0.0, float(rng.uniform(40, 360))),
                          (0.0, float(rng.uniform(0, 360)), 0.0), flag_payload(flag_id, f"flag {flag_id}"))
        for k, flag_id in enumerate(names["flags"])]

    scene = cg.CharacterScene()
    skin, raw = random_texture(rng, "bench_skin", 0, 16, 16)
    scene.textures[skin.name], scene.raws[skin.name] = skin, raw
    parts = [f"bench_part{p:02d}" for p in range(len(cg.BIPED_PARENTS))]
    for part in parts:
        scene.meshes[part] = random_mesh(rng, part, None, strips=6, points=24)
    scene.bodies[BODY] = cg.GenBody(BODY, cg.BIPED_PARENTS, rng.normal(0, 3, (len(parts), 3)).astype(np.float32),
                                    parts)
    scene.characters[CLASS] = cg.GenCharacter(CLASS, BODY, [skin.name] * len(parts), CLASS)
    for name, frames in zip(names["trams"], TRAMS):
        scene.trams[name] = cg.random_tram(rng, name, frames, max_gap=6)
    scene.collections[CLASS] = cg.GenCollection(CLASS, list(scene.trams), [100] * len(scene.trams))
    return level, scene, loose, names


def level_instances(level, scene, loose):
    """Every instance of the level in one set: level_generate's (ONLV, AKEV, lists, OBOA and what
    they link), the AKEV given its script-id table, the character class's (characters_generate's
    Builder on the same items and raw data), then the OBANs no setup links."""
    inst = lg.level_instances(level)
    akev = inst.by_name["AKEV" + level.environment.name]
    tag, name, data, placeholder = inst.items[akev]
    panels = np.array([5, 6], np.int32)
    quads = inst.add("IDXA", "", counted("IDXA", panels, "<i4"))
    ids = inst.add("IDXA", "", counted("IDXA", np.array(QUAD_SCRIPT_IDS, np.int32), "<i4"))
    data = bytearray(data)
    struct.pack_into("<2I", data, 0x28, link(quads), link(ids))   # script quads, script ids (docs/cutscenes.md 4.5)
    inst.items[akev] = (tag, name, bytes(data), placeholder)

    builder = cg.Builder(scene)
    builder.items, builder.raw, builder.by_name = inst.items, inst.raw, inst.by_name
    for character in scene.characters:
        builder.character(character)
    for animation in loose:
        if "OBAN" + animation.name not in inst.by_name:
            inst.add("OBAN", "OBAN" + animation.name, record_bytes(animation)[8:])
    return inst


# --- the script --------------------------------------------------------------------------------

def _actor(rng, key, names, frames, until):
    """One character's statements: envanims, animations (some with a frame count), teleports and
    sleeps, each step sleeping past what it started, up to `until` ticks."""
    lines, at = [], 0
    while at < until - 450:
        step = rng.integers(4)
        if step == 0:      # an envanim and an animation over it
            box = int(rng.integers(len(names["boxes"])))
            tram = int(rng.integers(len(names["trams"])))
            rotation = " norotation" if rng.random() < 0.5 else ""
            lines += [f"chr_envanim {key} {names['boxes'][box]}{rotation}",
                      f"chr_animate {key} {names['trams'][tram]}"]
            wait = BOXES[box]
        elif step == 1:    # an animation held (looping) for a frame count
            count = int(rng.integers(60, 300))
            lines.append(f"chr_animate {key} {names['trams'][int(rng.integers(len(names['trams'])))]} {count}")
            wait = count
        elif step == 2:    # an animation to its end
            tram = int(rng.integers(len(names["trams"])))
            lines.append(f"chr_animate {key} {names['trams'][tram]}")
            wait = int(rng.integers(40, frames[tram] + 1))
        else:              # a teleport to a flag
            lines.append(f"chr_teleport {key} {names['flags'][int(rng.integers(len(names['flags'])))]}")
            wait = int(rng.integers(20, 80))
        lines.append(f"sleep {wait}")
        at += wait
    return lines


def _props(rng, names, frames, until):
    """The placed objects' statements: all created (the last five later), the animated ones
    started, then again and again an object given a spare OBAN, killed, created and started."""
    ids = names["script_ids"]
    first, last, half = ids[0], ids[-1], ids[0] + len(ids) // 2 - 1
    lines = [f"obj_create {first} {last - 5}", f"env_anim {first} {half}", "sleep 120", f"obj_create {last - 4} {last}"]
    at = 120
    while at < until - 400:
        script_id = int(rng.choice(ids))
        spare = int(rng.integers(len(names["spare"])))
        wait = int(rng.integers(60, 240))
        lines += [f"env_setanim {script_id} {names['spare'][spare]}", f"sleep {wait}", f"obj_kill {script_id}",
                  "sleep 30", f"obj_create {script_id}", f"env_anim {script_id}", "sleep 20"]
        at += wait + 50
    return lines


def _main(rng, names, ticks, actors):
    """The function itself: shots of the camera OBANs in turn, each waited for, an interpolation
    between them; dialogue; env_show of the two panels; up to tick `ticks` - 1 (its last)."""
    lines = ["begin_cutscene", f"env_show {QUAD_SCRIPT_IDS[0]} 0", "fork bench_props"]
    lines += [f"fork {actor}" for actor in actors]
    at, shot = 0, 0
    while True:
        k = shot % len(CAMERAS)
        after = names["cameras"][(shot + 1) % len(CAMERAS)]
        if at + CAMERAS[k] - 1 + INTERPOLATION >= ticks - 2:
            break
        lines += [f"{'cm_anim_block' if shot % 3 == 2 else 'cm_anim'} both {names['cameras'][k]}",
                  f"sound_dialog_play bench_line{shot}", "cm_wait",
                  f"env_show {QUAD_SCRIPT_IDS[shot % 2]} {shot // 2 % 2}",
                  f"cm_interpolate {after} {INTERPOLATION}", "cm_wait"]
        at += CAMERAS[k] - 1 + INTERPOLATION   # cm_wait passes on T + F - 1 (2.3), then on T + N (2.5)
        shot += 1
    lines += [f"env_show {QUAD_SCRIPT_IDS[1]} 1", f"sleep {ticks - 1 - at}", "end_cutscene"]
    return lines


def script_text(rng, names, ticks):
    frames = dict(enumerate(TRAMS))
    actors = [f"bench_actor{k}" for k in range(len(names["characters"]))]
    functions = [("bench_props", _props(rng, names, frames, ticks - 200))]
    functions += [(actor, _actor(rng, key, names, frames, ticks - 200))
                  for actor, key in zip(actors, names["characters"])]
    functions.append((FUNCTION, _main(rng, names, ticks, actors)))
    out = ["# Generated by tools/generate/cutscene_generate.py: a cutscene over the whole level.", ""]
    for name, lines in functions:
        out += [f"func void {name}(void)", "{"] + [f"\t{line}" for line in lines] + ["}", ""]
    return "\n".join(out)


# --- files -------------------------------------------------------------------------------------

def write_cutscene(folder, seed=1, ticks=10_000, characters=5, objects=20) -> Generated:
    """The level (`folder`/level20_Final.dat + .raw) and its script (`folder`/IGMD/bench/)."""
    rng = np.random.default_rng(seed)
    level, scene, loose, names = build_level(rng, characters, objects)
    path = write_level_files(level_instances(level, scene, loose), folder, FILE_NAME)
    scripts = os.path.join(folder, "IGMD", LEVEL_NAME)
    os.makedirs(scripts, exist_ok=True)
    text = script_text(rng, names, ticks)
    with open(os.path.join(scripts, f"{LEVEL_NAME}_cutscene.bsl"), "w", encoding="latin-1") as f:
        f.write(text)
    counts = {"characters": characters, "objects": objects, "animated objects": objects // 2,
              "cameras": len(CAMERAS), "trams": len(TRAMS), "statements": sum(
                  1 for line in text.splitlines() if line.startswith("\t"))}
    return Generated(path, scripts, FUNCTION, ticks, counts)


def main(argv=None):
    import argparse
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder")
    parser.add_argument("--ticks", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    made = write_cutscene(args.folder, args.seed, args.ticks)
    print(f"{made.level}\n{made.scripts} ({made.function}, {made.ticks} ticks; {made.counts})")


if __name__ == "__main__":
    main()
