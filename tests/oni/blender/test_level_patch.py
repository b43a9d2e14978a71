"""A level's shading, flags and textures written back in place (docs/level.md 11): an unedited
import gives the level's bytes back; edits land exactly where the quads are stored, read back
as made, every other byte equal; what cannot change in place is refused, naming the face, and
nothing is written. Through the operator and the command line."""

import os
import shutil

import bpy
import numpy as np
import pytest
from commands import IN_BPY_MODULE, blender_script, python_module, run
from level_reference import GUNK_FLAG_BITS
from paths import DATA

from oban_import.oni.io.level.read import read_level

pytestmark = pytest.mark.usefixtures("addon")

ENV = os.path.join(DATA, "environment")
QUAD, SHADES, FLAGS = 56, 0x20, 0x30
# the flags the rooms' pathfinding grids were built from (LEVEL.md 9, docs/level.md 11)
GRID_FLAGS = ("Stairs", "NoCollision", "NoCharacterCollision", "Danger", "GridIgnore", "Impassable")


@pytest.fixture
def level(sample_level):
    return sample_level


def export(tmp_path):
    out = tmp_path / "out"
    return out, bpy.ops.export_anim.oni_level_shading(directory=str(out), use_selection=False)


def environment():
    return bpy.data.objects["level5 environment"]


def test_an_unedited_level_comes_back_byte_for_byte(tmp_path, level):
    out, result = export(tmp_path)
    assert result == {"FINISHED"}
    for name in ("level5_Final.dat", "level5_Final.raw"):
        assert (out / name).read_bytes() == open(os.path.join(os.path.dirname(level), name), "rb").read()


def quad_indices(obj):
    values = np.empty(len(obj.data.polygons), np.int32)
    obj.data.attributes["oni_quad"].data.foreach_get("value", values)
    return values


def test_edits_land_where_the_quads_are_stored_and_nothing_else_changes(tmp_path, level):
    before = read_level(level).environment
    obj, rng = environment(), np.random.default_rng(5)
    mesh = obj.data
    colours = rng.integers(0, 256, (len(mesh.loops), 4)).astype(np.float32) / 255
    mesh.color_attributes.active_color.data.foreach_set("color_srgb", colours.ravel())
    quads = quad_indices(obj)
    flags = np.empty(len(mesh.polygons), np.int32)
    mesh.attributes["oni_flags"].data.foreach_get("value", flags)
    flags[3] |= 0x10000                                      # NoOcclusion: not in the grids
    flags[4] &= ~0x80000                                     # Horizontal cleared
    mesh.attributes["oni_flags"].data.foreach_set("value", flags)
    slots = np.empty(len(mesh.polygons), np.int32)
    mesh.polygons.foreach_get("material_index", slots)
    opaque = [i for i, m in enumerate(mesh.materials) if m.use_backface_culling and "transparent" not in m.name]
    face = int(np.flatnonzero(slots == opaque[0])[0])
    slots[face] = opaque[1]                                  # another texture the level lists
    mesh.polygons.foreach_set("material_index", slots)
    out, result = export(tmp_path)
    assert result == {"FINISHED"}
    after = read_level(str(out / "level5_Final.dat")).environment
    sizes = np.empty(len(mesh.polygons), np.int32)
    mesh.polygons.foreach_get("loop_total", sizes)
    rgba = np.rint(colours * 255).astype(np.uint32)
    packed = rgba[:, 3] << 24 | rgba[:, 0] << 16 | rgba[:, 1] << 8 | rgba[:, 2]
    starts = np.cumsum(sizes) - sizes
    for f, quad in enumerate(quads):
        np.testing.assert_array_equal(after.shades[quad, :sizes[f]], packed[starts[f]:starts[f] + sizes[f]])
        np.testing.assert_array_equal(after.shades[quad, sizes[f]:], before.shades[quad, sizes[f]:])
    assert after.flags[quads[3]] == before.flags[quads[3]] | 0x10000
    assert after.flags[quads[4]] == before.flags[quads[4]] & ~np.uint32(0x80000)
    texture = mesh.materials[opaque[1]]["oni_texture_name"]
    assert after.texture_names[after.quad_textures[quads[face]]] == texture
    unchanged = np.setdiff1d(np.arange(len(before.flags)), quads)
    np.testing.assert_array_equal(after.shades[unchanged], before.shades[unchanged])
    original = np.frombuffer(open(level, "rb").read(), np.uint8)
    written = np.frombuffer((out / "level5_Final.dat").read_bytes(), np.uint8)
    assert len(original) == len(written)
    changed = np.flatnonzero(original != written)
    quads_at, textures_at = before.quads_at[1], before.quad_textures_at[1]
    in_quads = (changed >= quads_at) & (changed < quads_at + QUAD * len(before.flags))
    place = (changed[in_quads] - quads_at) % QUAD
    assert ((place >= SHADES) & (place < FLAGS + 4)).all()   # shades and flags, nothing else of a quad
    in_textures = (changed >= textures_at) & (changed < textures_at + 4 * len(before.flags))
    assert (in_quads | in_textures).all()
    assert ((changed[in_textures] - textures_at) % 4 < 2).all()
    assert (out / "level5_Final.raw").read_bytes() == open(level[:-4] + ".raw", "rb").read()


@pytest.mark.parametrize("edit, message", [
    ("Transparent", "made Transparent"), ("Triangle", "made a quad or a quad a triangle"),
    *[(name, f"{name} changed: the rooms' pathfinding grids were built from it") for name in GRID_FLAGS],
    ("deleted", "deleted"), ("duplicated", "made 2 times"), ("moved", "its corners moved"),
    ("texture", "a texture the level's texture list (TXMA) does not hold"),
])
def test_what_cannot_change_in_place_is_refused_naming_the_face_and_nothing_is_written(tmp_path, level, edit,
                                                                                       message):
    obj = environment()
    mesh = obj.data
    flags = np.empty(len(mesh.polygons), np.int32)
    mesh.attributes["oni_flags"].data.foreach_get("value", flags)
    opaque = int(np.flatnonzero((flags & 0x80) == 0)[0])
    if edit in GUNK_FLAG_BITS:
        flags[opaque] ^= GUNK_FLAG_BITS[edit]
        mesh.attributes["oni_flags"].data.foreach_set("value", flags)
    elif edit in ("deleted", "duplicated"):
        import bmesh
        edited = bmesh.new()
        edited.from_mesh(mesh)
        edited.faces.ensure_lookup_table()
        if edit == "deleted":
            bmesh.ops.delete(edited, geom=[edited.faces[opaque]], context="FACES_ONLY")
        else:   # the copy keeps the face's quad (oni_quad) and its corners
            bmesh.ops.duplicate(edited, geom=[edited.faces[opaque]])
        edited.to_mesh(mesh)
        edited.free()
    elif edit == "moved":
        mesh.vertices[mesh.polygons[opaque].vertices[0]].co.z += 0.5
    else:
        stranger = bpy.data.materials.new("stranger")
        stranger["oni_texture_name"] = "nowhere"
        mesh.materials.append(stranger)
        mesh.polygons[opaque].material_index = len(mesh.materials) - 1
    out = tmp_path / "out"
    with pytest.raises(RuntimeError) as caught:
        bpy.ops.export_anim.oni_level_shading(directory=str(out), use_selection=False)
    text = str(caught.value)
    assert message in text and "cannot be patched in place" in text and "rebuild" in text
    if edit not in ("deleted", "duplicated"):
        assert f"object 'level5 environment' face {opaque}" in text
    assert not out.exists() or not os.listdir(out)


def test_making_a_quad_opaque_and_changing_any_other_flag_is_carried(tmp_path, level):
    """Every flag but Transparent, Triangle and the grids' toggled on every face, Transparent
    cleared: each quad's flags arrive as edited."""
    mesh = environment().data
    flags = np.empty(len(mesh.polygons), np.int32)
    mesh.attributes["oni_flags"].data.foreach_get("value", flags)
    assert (flags & GUNK_FLAG_BITS["Transparent"]).any()
    refused = sum(GUNK_FLAG_BITS[name] for name in ("Transparent", "Triangle", *GRID_FLAGS))
    edited = (flags.view(np.uint32) ^ np.uint32(0xFFFFFFFF & ~refused)) & ~np.uint32(GUNK_FLAG_BITS["Transparent"])
    mesh.attributes["oni_flags"].data.foreach_set("value", edited.view(np.int32))
    out, result = export(tmp_path)
    assert result == {"FINISHED"}
    np.testing.assert_array_equal(read_level(str(out / "level5_Final.dat")).environment.flags[quad_indices(
        environment())], edited)


def test_float_colours_beyond_0_to_1_are_written_clamped(tmp_path, level):
    """The shades made a float colour attribute of values below 0 and above 1 (another colour
    attribute active, which is not read): each corner's shade is its bytes round(255 clip(c, 0, 1))."""
    mesh = environment().data
    colours = np.random.default_rng(7).integers(-255, 511, (len(mesh.loops), 4)).astype(np.float32) / 255
    assert (colours < 0).any() and (colours > 1).any()
    mesh.color_attributes.remove(mesh.color_attributes["oni_shade"])
    shades = mesh.color_attributes.new("oni_shade", "FLOAT_COLOR", "CORNER")
    shades.data.foreach_set("color_srgb", colours.ravel())
    mesh.color_attributes.active_color = mesh.color_attributes.new("paint", "BYTE_COLOR", "CORNER")
    out, result = export(tmp_path)
    assert result == {"FINISHED"}
    rgba = np.rint(np.clip(colours, 0, 1) * 255).astype(np.uint32)
    packed = rgba[:, 3] << 24 | rgba[:, 0] << 16 | rgba[:, 1] << 8 | rgba[:, 2]
    sizes = np.empty(len(mesh.polygons), np.int32)
    mesh.polygons.foreach_get("loop_total", sizes)
    after = read_level(str(out / "level5_Final.dat")).environment
    for quad, start, size in zip(quad_indices(environment()), np.cumsum(sizes) - sizes, sizes):
        np.testing.assert_array_equal(after.shades[quad, :size], packed[start:start + size])


# the .blend is saved by the Blender running the tests: the command must be as new
@pytest.mark.parametrize("command", [python_module] if IN_BPY_MODULE else [blender_script])
def test_the_command_line_writes_the_patched_level(tmp_path, level, command):
    obj = environment()
    colours = np.zeros(4 * len(obj.data.loops), np.float32)
    colours[3::4] = 1.0
    obj.data.color_attributes.active_color.data.foreach_set("color_srgb", colours)   # all black
    blend = tmp_path / "edited.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(blend))
    out = tmp_path / "cli"
    done = run(command, "export", blend, "-o", out, "--format", "level-patch")
    assert done.returncode == 0, done.stderr
    assert "level5_Final.dat" in done.stdout
    after = read_level(str(out / "level5_Final.dat")).environment
    quads = quad_indices(obj)
    assert (after.shades[quads, :3] == 0xFF000000).all()


def test_a_loose_environment_is_patched_in_its_own_file(tmp_path):
    folder = tmp_path / "akev"
    shutil.copytree(os.path.join(ENV, "akev"), folder)
    assert bpy.ops.import_anim.oban(filepath=str(folder / "AKEVlevel5_env.oni")) == {"FINISHED"}
    out, result = export(tmp_path)
    assert result == {"FINISHED"}
    assert os.listdir(out) == ["AKEVlevel5_env.oni"]
    assert (out / "AKEVlevel5_env.oni").read_bytes() == (folder / "AKEVlevel5_env.oni").read_bytes()


def test_a_level_changed_since_or_its_own_folder_is_refused(tmp_path, level):
    with pytest.raises(RuntimeError, match="would replace the file it was read from: write into another folder"):
        bpy.ops.export_anim.oni_level_shading(directory=os.path.dirname(level), use_selection=False)
    before = read_level(level).environment
    data = bytearray(open(level, "rb").read())
    at = before.quads_at[1] + FLAGS
    data[at] ^= 0x01                                         # the first quad's flags, changed behind the scene
    open(level, "wb").write(bytes(data))
    with pytest.raises(RuntimeError, match="its quads are not the ones imported: the file has changed since"):
        export(tmp_path)


def test_a_folder_that_cannot_be_written_is_an_error_naming_it(tmp_path, level):
    """The output folder is a file: the export says so, naming it; nothing else is written."""
    blocked = tmp_path / "out"
    blocked.write_bytes(b"")
    with pytest.raises(RuntimeError, match=f"{blocked}: cannot be written"):
        bpy.ops.export_anim.oni_level_shading(directory=str(blocked), use_selection=False)
    assert sorted(os.listdir(tmp_path)) == ["in", "out"] and blocked.read_bytes() == b""
