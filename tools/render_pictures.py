"""Renders the README's pictures with Blender (Cycles on the CPU; the cutscenes with Workbench), from the
bundled examples and the tests' data:

  docs/images/level.png         the sample level as imported, each of its nine objects where the game puts it,
                                framed on itself and named (three by three)
  docs/images/environment.png   a level as the game shows it: its environment textured and shaded, doors mid-swing
  docs/images/relit.png         the sample level's environment as baked (left) and relit in Blender (right)
  docs/images/door.png          a door as the sample level has it (left) and in OniSplit's level of its export with
                                the door's texture repainted in Blender (right, tests/data/environment/painted_door)
  docs/images/motion_path.png   an animated object's path, and where (and how turned) it stands on six frames
  docs/images/character.png     the sample character mid-walk, textured, with its root's path
  docs/images/body.png          the sample character as imported (left) and re-modelled in Blender (right: a round
                                head, bigger fists, the head raised), exported as a body and imported again
  docs/images/sprites.png       the Outpost 2 example's two animations, every frame of each
  docs/images/cutscene.png      a frame of a cutscene of OniSplit's level12 (left) beside the same frame of its
                                camera's OBAN imported alone, over the level imported alone (right)
  docs/images/cutscene_export.png  a frame of a cutscene made in Blender in level12 (two Bezier cameras cut by a
                                marker, the player walking with its TRAMs in NLA strips, a crate turning) through
                                its camera (left), and the same frame of the import of what the cutscene export
                                wrote of it, in a fresh scene (right)
  docs/images/rebuilt_placed.png  OniSplit's build of the rebuild export of tests/data/environment/placed (level9's
                                objects placed in the sample level) with a wall added and door 8 re-modelled, its
                                placed objects in place, as the add-on imports it (RUNS OniSplit with mono)

    .venvs/bpy-5.0/bin/python tools/render_pictures.py [NAME...]   (or blender -b -P tools/render_pictures.py)

NAME (level, environment, relit, door, motion, character, body, sprites, cutscene, cutscene_export, rebuilt_placed) renders
those alone.
"""

import os
import sys
import tempfile

import bpy
import numpy as np
from mathutils import Vector

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

import oban_import  # noqa: E402
from oban_import.oni.cutscene import CUTSCENE_CHARACTER  # noqa: E402
from oban_import.oni.export.bodies.export import export_bodies  # noqa: E402
from oban_import.oni.io.oban.properties import FRAMES, NAME  # noqa: E402
from oban_import.oni.io.objects.properties import OBJECT_NAME, OBJECT_SCRIPT_ID  # noqa: E402
from oban_import.outpost2.io.op2_properties import FRAME_COUNT, INDEX  # noqa: E402
from oban_import.ui.options import BodyExportSettings  # noqa: E402

EXAMPLES = os.path.join(ROOT, "examples")
PAINTED_DOOR = os.path.join(ROOT, "tests", "data", "environment", "painted_door", "level5_Final.dat")
CUTSCENE = os.path.join(ROOT, "tests", "data", "cutscene")
OUT = os.path.join(ROOT, "docs", "images")


def new_scene(engine_samples=24):
    bpy.ops.wm.read_factory_settings(use_empty=True)
    scene = bpy.context.scene
    scene.render.engine = "CYCLES"
    scene.cycles.device = "CPU"
    scene.cycles.samples = engine_samples
    scene.render.resolution_x, scene.render.resolution_y = 800, 450
    scene.render.film_transparent = False
    scene.view_settings.view_transform = "Standard"
    world = bpy.data.worlds.new("world")
    scene.world = world
    if world.node_tree is None:
        world.use_nodes = True
    background = world.node_tree.nodes["Background"]
    background.inputs["Color"].default_value = (0.55, 0.6, 0.68, 1.0)
    background.inputs["Strength"].default_value = 1.2
    return scene


def look_at(scene, target, direction, distance, ortho_scale=None):
    camera = bpy.data.objects.new("camera", bpy.data.cameras.new("camera"))
    scene.collection.objects.link(camera)
    direction = Vector(direction).normalized()
    camera.location = Vector(target) + distance * direction
    camera.rotation_euler = (-direction).to_track_quat("-Z", "Y").to_euler()
    if ortho_scale:
        camera.data.type = "ORTHO"
        camera.data.ortho_scale = ortho_scale
    camera.data.clip_end = 100 * distance
    scene.camera = camera


def sun(scene, rotation=(0.7, 0.2, 0.6), strength=3.0):
    light = bpy.data.objects.new("sun", bpy.data.lights.new("sun", "SUN"))
    light.data.energy = strength
    light.rotation_euler = rotation
    scene.collection.objects.link(light)


def world_points(objects):
    """Every vertex of `objects` in world space (from the parent's matrix for a child, which
    is right even where a hidden child's own matrix_world is not re-evaluated)."""
    points = []
    for obj in objects:
        matrix = np.array(obj.matrix_world)
        if obj.parent is not None and obj.parent_type == "OBJECT":
            matrix = np.array(obj.parent.matrix_world) @ np.array(obj.matrix_parent_inverse) @ np.array(obj.matrix_basis)
        co = np.empty(len(obj.data.vertices) * 3, np.float32)
        obj.data.vertices.foreach_get("co", co)
        points.append(np.c_[co.reshape(-1, 3), np.ones(len(obj.data.vertices))] @ matrix.T)
    return np.concatenate(points)[:, :3]


def path_tube(scene, name, points, radius, colour=(0.9, 0.25, 0.05, 1.0)):
    curve = bpy.data.curves.new(name, "CURVE")
    curve.dimensions = "3D"
    curve.bevel_depth = radius
    spline = curve.splines.new("POLY")
    spline.points.add(len(points) - 1)
    spline.points.foreach_set("co", np.c_[points, np.ones(len(points))].astype(np.float32).ravel())
    obj = bpy.data.objects.new(name, curve)
    material = bpy.data.materials.new(name)
    if material.node_tree is None:
        material.use_nodes = True
    bsdf = material.node_tree.nodes["Principled BSDF"]
    bsdf.inputs["Base Color"].default_value = colour
    curve.materials.append(material)
    scene.collection.objects.link(obj)


def frame(scene, objects, direction, margin=1.15):
    """An orthographic camera along `direction` that shows every point of `objects`."""
    points = world_points(objects)
    centre = (points.min(0) + points.max(0)) / 2
    view = Vector(direction).normalized()
    right = view.cross(Vector((0, 0, 1))).normalized()
    up = right.cross(view)
    offsets = points - centre
    width = np.ptp(offsets @ np.array(right)) if len(points) > 1 else 1.0
    height = np.ptp(offsets @ np.array(up)) if len(points) > 1 else 1.0
    aspect = scene.render.resolution_x / scene.render.resolution_y
    size = margin * max(width, height * aspect, 1e-3)
    look_at(scene, centre.tolist(), -view, 4 * float(np.linalg.norm(np.ptp(points, axis=0))) + 1, ortho_scale=size)


def translucent(name, colour, alpha):
    """A material `alpha` opaque (Cycles: mixed with a transparent BSDF)."""
    material = bpy.data.materials.new(name)
    if material.node_tree is None:
        material.use_nodes = True
    nodes, links = material.node_tree.nodes, material.node_tree.links
    bsdf, output = nodes["Principled BSDF"], nodes["Material Output"]
    bsdf.inputs["Base Color"].default_value = colour
    mix, clear = nodes.new("ShaderNodeMixShader"), nodes.new("ShaderNodeBsdfTransparent")
    mix.inputs[0].default_value = alpha
    links.new(clear.outputs[0], mix.inputs[1])
    links.new(bsdf.outputs[0], mix.inputs[2])
    links.new(mix.outputs[0], output.inputs["Surface"])
    return material


def label(scene, obj, text, size, view):
    """`text` above obj, facing along -`view`, on a thin stem down to it."""
    top = np.array(obj.matrix_world.translation) + np.array([0.0, 0.0, 3 * size])
    path_tube(scene, f"{text} stem", np.array([np.array(obj.matrix_world.translation), top]), size / 30,
              (0.95, 0.85, 0.2, 1.0))
    curve = bpy.data.curves.new(f"{text} label", "FONT")
    curve.body, curve.size, curve.align_x = text, size, "CENTER"
    words = bpy.data.objects.new(f"{text} label", curve)
    words.location = top + np.array([0.0, 0.0, 0.3 * size])
    words.rotation_euler = (-Vector(view)).to_track_quat("Z", "Y").to_euler()
    scene.collection.objects.link(words)


def axes_of(scene, obj, length, radius):
    """Three bars from obj's origin along its own x, y and z (red, green, blue)."""
    for axis, colour in enumerate(((0.9, 0.1, 0.1, 1), (0.1, 0.8, 0.1, 1), (0.1, 0.2, 0.95, 1))):
        matrix = np.array(obj.matrix_world)
        origin, direction = matrix[:3, 3], matrix[:3, axis] / np.linalg.norm(matrix[:3, axis])
        path_tube(scene, f"{obj.name} axis {axis}", np.array([origin, origin + length * direction]), radius, colour)


def tiles(images, columns):
    """Rendered images (h, w, 4) side by side in rows."""
    rows = [np.concatenate(images[i:i + columns] + [np.zeros_like(images[0])] * (i + columns - len(images)), axis=1)
            for i in range(0, len(images), columns)]
    return np.concatenate(rows[::-1], axis=0)   # Blender's pixels are bottom row first


def rendered(scene):
    bpy.ops.render.render()
    result = bpy.data.images["Render Result"]
    path = os.path.join(OUT, ".tile.png")
    result.save_render(path)
    image = bpy.data.images.load(path)
    pixels = np.empty(image.size[0] * image.size[1] * 4, np.float32)
    image.pixels.foreach_get(pixels)
    bpy.data.images.remove(image)
    os.remove(path)
    return pixels.reshape(scene.render.resolution_y, scene.render.resolution_x, 4)


def save(pixels, name):
    image = bpy.data.images.new(name, pixels.shape[1], pixels.shape[0], alpha=True)
    image.pixels.foreach_set(pixels.ravel())
    image.filepath_raw, image.file_format = os.path.join(OUT, name), "PNG"
    image.save()
    print(f"wrote {image.filepath_raw}")


def level_picture():
    """The sample level as imported, at frame 1, textured (Workbench: the textures' own colours,
    no lighting to guess): the level holds placed objects alone (no environment) a few metres
    across, spread over some two hundred metres, so each is shown framed on itself (the others where
    they stand, where they fall in its view), named under it, in a grid of nine."""
    scene = new_scene()
    scene.render.engine = "BLENDER_WORKBENCH"
    scene.display.shading.light = "STUDIO"
    scene.display.shading.color_type = "TEXTURE"
    scene.display.shading.show_cavity = True
    scene.render.resolution_x, scene.render.resolution_y = 400, 270
    bpy.ops.import_anim.oban(filepath=os.path.join(EXAMPLES, "level9_Final.dat"))
    placed = sorted((o for o in scene.objects if OBJECT_NAME in o), key=lambda o: o[OBJECT_NAME])
    scene.frame_set(1)
    view = (-0.55, 1.0, -0.6)
    images = []
    for obj in placed:
        frame(scene, [obj], view, margin=1.5)
        caption(scene, obj[OBJECT_NAME])
        image = rendered(scene)
        image[[0, 1, -2, -1], :, :3] = image[:, [0, 1, -2, -1], :3] = 0.12   # a dark line between tiles
        images.append(image)
        bpy.data.batch_remove([o for o in scene.objects if o.type in {"CAMERA", "FONT"}])
    save(tiles(images, 3), "level.png")


def caption(scene, text):
    """`text` at the bottom of the (orthographic) camera's view, in front of everything."""
    camera = scene.camera
    bpy.context.view_layer.update()   # the new camera's matrix_world
    size = camera.data.ortho_scale
    height = size * scene.render.resolution_y / scene.render.resolution_x
    forward = camera.matrix_world.to_3x3() @ Vector((0, 0, -1))
    up = camera.matrix_world.to_3x3() @ Vector((0, 1, 0))
    curve = bpy.data.curves.new(f"{text} caption", "FONT")
    curve.body, curve.size, curve.align_x = text, height / 9, "CENTER"
    words = bpy.data.objects.new(f"{text} caption", curve)
    words.location = camera.location + 0.5 * forward - 0.42 * height * up
    words.rotation_euler = camera.rotation_euler
    scene.collection.objects.link(words)


def rebuilt_placed_picture():
    """The level of tests/data/environment/placed (the sample level with level9's nine objects
    placed in it) imported, edited (a wall added: a wall quad of the environment copied 1.5 m
    out into its room; door 8 re-modelled: its leaf raised 1 m and given a triangle) and exported
    for OniSplit with the add-on's rebuild export, then built as the README says ("A level rebuilt
    by OniSplit"): RUNS OniSplit (mono /tmp/onisplit/bin/OniSplit.exe, or $ONISPLIT) for
    -create:level and -import:nosep, and the place step (oban_import.oni.io.level_rebuild.place,
    what `python -m oban_import place OUT DIR/level5` runs) between them; stops, saying so, if
    OniSplit or mono is missing. OniSplit's level is imported into a fresh scene and shown as
    environment.png is (from above, ceilings cut), at its first frame."""
    import bmesh
    import lzma
    import shutil
    import subprocess
    from oban_import.oni.export.level.rebuild import export_level_rebuilds
    from oban_import.oni.io.level_rebuild.place import place
    from oban_import.ui.options import LevelRebuildSettings

    onisplit = os.environ.get("ONISPLIT", "/tmp/onisplit/bin/OniSplit.exe")
    if not os.path.isfile(onisplit) or shutil.which("mono") is None:
        print(f"rebuilt_placed: needs OniSplit ({onisplit}, or $ONISPLIT) and mono: not rendered")
        return
    work = tempfile.mkdtemp(prefix="rebuilt_placed_")
    source = os.path.join(ROOT, "tests", "data", "environment", "placed", "level")
    for name in ("level5_Final.dat", "level5_Final.raw"):
        with lzma.open(os.path.join(source, name + ".xz")) as f:
            open(os.path.join(work, name), "wb").write(f.read())
    bpy.ops.wm.read_factory_settings(use_empty=True)
    bpy.ops.import_anim.oban(filepath=os.path.join(work, "level5_Final.dat"))
    mesh = bpy.data.objects["level5 environment"].data
    bm = bmesh.new()
    bm.from_mesh(mesh)
    tags = bm.faces.layers.int.get("oni_object_tag")
    flags = bm.faces.layers.int.get("oni_flags")
    target = Vector((12.0, -3.0, 1.5))
    walls = [f for f in bm.faces if f[tags] == -1 and (f[flags] & 0xE) == 0 and abs(f.normal.z) < 0.05
             and f.calc_area() > 2.0 and len(f.verts) == 4]
    wall = min(walls, key=lambda f: (f.calc_center_median() - target).length)
    copy = bmesh.ops.duplicate(bm, geom=[wall])["geom"]
    bmesh.ops.translate(bm, vec=-1.5 * wall.normal,   # the walls face out: into the room
                        verts=[v for v in copy if isinstance(v, bmesh.types.BMVert)])
    bm.to_mesh(mesh)
    bm.free()
    mesh.update()
    leaf = bpy.data.objects["door_8"].data
    bm = bmesh.new()
    bm.from_mesh(leaf)
    bmesh.ops.translate(bm, vec=(0.0, 0.0, 1.0), verts=bm.verts)
    bm.faces.new([bm.verts.new(co) for co in ((0.0, 0.0, 0.5), (0.6, 0.0, 0.5), (0.0, 0.6, 0.5))])
    bm.to_mesh(leaf)
    bm.free()
    leaf.update()
    bpy.context.view_layer.update()
    export = os.path.join(work, "export")
    result = export_level_rebuilds(bpy.context, bpy.context.scene.objects, export,
                                   LevelRebuildSettings(use_selection=False, despite_edits=False))
    print("rebuilt_placed: export", result)
    folder, out = os.path.join(export, "level5"), os.path.join(work, "OUT")
    os.makedirs(out)
    subprocess.run(["mono", onisplit, "-create:level", out, os.path.join(folder, "level5.xml")], check=True)
    for name in os.listdir(os.path.join(folder, "classes")):
        shutil.copy(os.path.join(folder, "classes", name), os.path.join(out, name.replace(" ", "_")))
    for name in os.listdir(out):
        if " " in name:
            os.replace(os.path.join(out, name), os.path.join(out, name.replace(" ", "_")))
    print("rebuilt_placed: place:", place(out, folder))
    built = os.path.join(work, "built", "level5_Final.dat")
    subprocess.run(["mono", onisplit, "-import:nosep", out, built], check=True)
    scene = new_scene(engine_samples=32)
    scene.render.resolution_x, scene.render.resolution_y = 1200, 675
    bpy.ops.import_anim.oban(filepath=built)
    environment = without_ceilings(bpy.data.objects["level5 environment"])
    scene.frame_set(scene.frame_start)
    sun(scene, rotation=(0.5, 0.3, 0.9), strength=2.0)
    view = (-0.45, 0.75, -1.0)
    frame(scene, [environment], view, margin=1.05)
    save(rendered(scene), "rebuilt_placed.png")
    shutil.rmtree(work)


def without_ceilings(environment):
    """The environment object with the faces that look down cut away, to be seen from above."""
    mesh = environment.data
    normals = np.empty(3 * len(mesh.polygons), np.float32)
    mesh.polygons.foreach_get("normal", normals)
    import bmesh
    cut = bmesh.new()
    cut.from_mesh(mesh)
    bmesh.ops.delete(cut, geom=[f for f, z in zip(cut.faces, normals[2::3]) if z < -0.5], context="FACES")
    cut.to_mesh(mesh)
    cut.free()
    return environment


def environment_picture():
    """The sample level with its environment: textured, shaded as the game bakes it, its doors
    mid-swing, seen from above with the ceilings cut away (the faces that look down)."""
    scene = new_scene(engine_samples=32)
    scene.render.resolution_x, scene.render.resolution_y = 1200, 675
    bpy.ops.import_anim.oban(filepath=os.path.join(EXAMPLES, "level5_Final.dat"))
    environment = without_ceilings(bpy.data.objects["level5 environment"])
    scene.frame_set(scene.frame_start + 40)   # the doors half open
    sun(scene, rotation=(0.5, 0.3, 0.9), strength=2.0)
    frame(scene, [environment], (-0.45, 0.75, -1.0), margin=1.05)
    save(rendered(scene), "environment.png")


def relit_picture():
    """The sample level's environment seen from above, ceilings cut, lit only by its shades (an
    emission shader: what the game shows), as baked and then relit: a warm light near the
    stairs baked into the oni_shade colours, as a modder would before Export Level Shading."""
    scene = new_scene(engine_samples=8)
    scene.render.resolution_x, scene.render.resolution_y = 800, 450
    bpy.ops.import_anim.oban(filepath=os.path.join(EXAMPLES, "level5_Final.dat"))
    environment = without_ceilings(bpy.data.objects["level5 environment"])
    mesh = environment.data
    for material in mesh.materials:   # the shade times the texture, no scene light: as the game draws it
        nodes, links = material.node_tree.nodes, material.node_tree.links
        output = next(n for n in nodes if n.type == "OUTPUT_MATERIAL")
        shader = output.inputs["Surface"].links[0].from_node
        emission = nodes.new("ShaderNodeEmission")
        links.new(shader.inputs["Base Color"].links[0].from_socket, emission.inputs["Color"])
        links.new(emission.outputs["Emission"], output.inputs["Surface"])
    frame(scene, [environment], (-0.45, 0.75, -1.0), margin=1.05)
    images = [rendered(scene)]
    shades = mesh.color_attributes["oni_shade"]
    colours = np.empty(4 * len(mesh.loops), np.float32)
    shades.data.foreach_get("color_srgb", colours)
    colours = colours.reshape(-1, 4)
    points = np.empty(3 * len(mesh.vertices), np.float32)
    mesh.vertices.foreach_get("co", points)
    corners = np.empty(len(mesh.loops), np.int32)
    mesh.loops.foreach_get("vertex_index", corners)
    at = points.reshape(-1, 3)[corners] @ np.asarray(environment.matrix_world)[:3, :3].T
    light = np.array([28.5, -5.0, 1.5])                 # near the ramp, in Blender's metres
    reach = np.exp(-np.sum((at - light) ** 2, axis=1) / 2 / 9.0)[:, None]
    colours[:, :3] = np.clip(colours[:, :3] * 0.35 + reach * np.array([1.0, 0.55, 0.2]), 0, 1)
    shades.data.foreach_set("color_srgb", colours.ravel())
    mesh.update()
    images.append(rendered(scene))
    save(tiles(images, 2), "relit.png")


def door_picture():
    """Door 1 (its class dr_swing) closed, as the sample level has it and as OniSplit's level of
    the rebuild export holds it with the door's texture repainted in Blender: the leaf from
    each level's placed objects, lit the same, side by side."""
    images = []
    for level in (os.path.join(EXAMPLES, "level5_Final.dat"), PAINTED_DOOR):
        scene = new_scene(engine_samples=16)
        scene.render.resolution_x, scene.render.resolution_y = 400, 450
        bpy.ops.import_anim.oban(filepath=level, environment=False, object_lists=False)
        scene.frame_set(scene.frame_start)
        leaf = bpy.data.objects["door_1"]
        bpy.data.batch_remove([obj for obj in scene.objects if obj.type == "MESH" and obj is not leaf])
        points = world_points([leaf])
        facing = np.linalg.svd(points - points.mean(axis=0))[2][2]      # the panel's thinnest axis
        sun(scene, rotation=(0.9, 0.0, 2.6), strength=4.0)
        frame(scene, [leaf], (-facing + (0, 0, -0.25)).tolist(), margin=1.2)
        images.append(rendered(scene))
    save(tiles(images, 2), "door.png")


def motion_picture():
    """The level's longest-moving object: its path over every frame, and where it stands on
    six of them, each drawn half transparent with its own axes (x red, y green, z blue), so
    that its turn along the path reads."""
    scene = new_scene()
    scene.render.resolution_x, scene.render.resolution_y = 720, 405
    bpy.ops.import_anim.oban(filepath=os.path.join(EXAMPLES, "level9_Final.dat"))
    placed = [o for o in scene.objects if OBJECT_NAME in o]
    mover = max((o for o in placed if NAME in o), key=lambda o: o[FRAMES])
    for other in placed:
        other.hide_render = other is not mover
    frames = int(mover[FRAMES])
    ghost_material = translucent("ghost", (0.85, 0.85, 0.9, 1.0), 0.45)
    track, ghosts = [], []
    for f in range(frames):
        scene.frame_set(scene.frame_start + f)
        track.append(np.array(mover.matrix_world.translation))
        if f % max(1, frames // 6) == 0:
            ghost = bpy.data.objects.new(f"{mover.name} at {f}", mover.data.copy())
            ghost.data.materials.clear()
            ghost.data.materials.append(ghost_material)
            ghost.matrix_world = mover.matrix_world.copy()
            scene.collection.objects.link(ghost)
            ghosts.append(ghost)
    mover.hide_render = True
    scene.frame_set(1)
    size = float(np.ptp(world_points(ghosts), axis=0).max())
    for ghost in ghosts:
        axes_of(scene, ghost, 0.6 * size / 6, size / 250)
    path_tube(scene, "path", np.array(track), size / 150)
    sun(scene)
    frame(scene, ghosts, (-0.6, 1.0, -0.7))
    save(rendered(scene), "motion_path.png")


def character_picture():
    """The sample character mid-walk, textured, with its root's path over the walk."""
    scene = new_scene()
    scene.render.resolution_x, scene.render.resolution_y = 540, 540
    bpy.ops.import_anim.oban(filepath=os.path.join(EXAMPLES, "ONCCchar0.oni"))
    armature = next(o for o in scene.objects if o.type == "ARMATURE")
    parts = [o for o in scene.objects if o.parent is armature]
    root = armature.pose.bones[0]
    track = []
    frames = int(armature.animation_data.action["tram_frames"])
    for f in range(frames):
        scene.frame_set(scene.frame_start + f)
        track.append(np.array(armature.matrix_world @ root.head))
    scene.frame_set(scene.frame_start + frames // 2)
    path_tube(scene, "root path", np.array(track), 0.01)
    sun(scene)
    frame(scene, parts, (-0.8, 1.0, -0.35), margin=1.6)
    save(rendered(scene), "character.png")


def imported_character(path):
    """The character class at `path` imported without animations: its armature."""
    before = set(bpy.data.objects)
    assert bpy.ops.import_anim.oban(filepath=path, character_animations="NONE") == {"FINISHED"}
    return next(obj for obj in bpy.data.objects if obj not in before and obj.type == "ARMATURE")


def on_bone(armature, bone):
    return next(obj for obj in armature.children if obj.parent_bone == bone)


def remodel(armature):
    """What a modder might do: the head a ball (a new mesh, its material kept) raised on a longer
    neck (the Head bone moved up), the fists 2.5 times their size (their points scaled)."""
    import bmesh
    head = on_bone(armature, "Head")
    points = world_points([head]) - np.array(head.matrix_world.translation)   # the old head, in its own axes
    ball = bmesh.new()
    ball.loops.layers.uv.verify()
    bmesh.ops.create_uvsphere(ball, u_segments=16, v_segments=10, radius=0.16, calc_uvs=True)
    centre = np.array(head.matrix_world.to_3x3().inverted()) @ ((points.min(0) + points.max(0)) / 2)
    bmesh.ops.translate(ball, verts=ball.verts, vec=centre.tolist())
    mesh = bpy.data.meshes.new("round head")
    ball.to_mesh(mesh)
    ball.free()
    mesh.polygons.foreach_set("use_smooth", np.ones(len(mesh.polygons), bool))
    mesh.materials.append(head.data.materials[0])
    head.data = mesh
    for fist in ("LeftFist", "RightFist"):
        mesh = on_bone(armature, fist).data
        points = np.empty(3 * len(mesh.vertices), np.float32)
        mesh.vertices.foreach_get("co", points)
        points = points.reshape(-1, 3)
        centre = points.mean(axis=0)
        mesh.vertices.foreach_set("co", (centre + 2.5 * (points - centre)).ravel())
        mesh.update()
    bpy.context.view_layer.objects.active = armature
    bpy.ops.object.mode_set(mode="EDIT")
    bone = armature.data.edit_bones["Head"]
    bone.head.z += 0.12
    bone.tail.z += 0.12
    bpy.ops.object.mode_set(mode="OBJECT")


def body_picture():
    """The sample character as imported (left) and, right, what the body export wrote of it
    re-modelled in Blender (remodel), imported again from the written files: what the game's
    files hold, not the scene that made them. At rest, lit the same, side by side."""
    scene = new_scene(engine_samples=16)
    sample = os.path.join(EXAMPLES, "ONCCchar0.oni")
    before = imported_character(sample)
    edited = imported_character(sample)
    remodel(edited)
    with tempfile.TemporaryDirectory() as folder:
        report = export_bodies(bpy.context, [edited], folder, BodyExportSettings())
        assert report.made and not report.errors and not report.warnings, report.errors + report.warnings
        for made in report.made:
            print(f"  {os.path.basename(made.path)}: {made.note}")
        bpy.data.batch_remove([edited, *edited.children])
        after = imported_character(os.path.join(folder, "ONCCchar0.oni"))
        view = Vector((-0.25, 1.0, -0.2))
        after.location = 1.3 * before.dimensions.x * view.cross(Vector((0, 0, 1))).normalized()   # beside it, level
        scene.view_layers[0].update()
        sun(scene, rotation=(0.8, 0.1, 0.4), strength=3.0)
        frame(scene, [obj for obj in scene.objects if obj.parent in (before, after)], view, margin=1.1)
        save(rendered(scene), "body.png")


def sprite_picture():
    """The Outpost 2 example: each animation's frames side by side, as Blender shows them."""
    scene = new_scene(8)
    scene.render.resolution_x = scene.render.resolution_y = 160
    bpy.ops.import_anim.op2_sprites(filepath=os.path.join(EXAMPLES, "op2_art.prt"))
    images = []
    empties = sorted((o for o in scene.objects if FRAME_COUNT in o), key=lambda o: o[INDEX])
    for empty in empties:
        planes = [o for o in scene.objects if o.parent is empty]
        for f in range(empty[FRAME_COUNT]):
            scene.frame_set(scene.frame_start + f)
            frame(scene, planes, (0, 1, 0), margin=1.05)
            images.append(rendered(scene))
    save(tiles(images, 6), "sprites.png")


def workbench(scene):
    """Workbench at 640 x 360: inside a closed room, the textures' colours under studio light."""
    scene.render.engine = "BLENDER_WORKBENCH"
    scene.display.shading.light = "STUDIO"
    scene.display.shading.color_type = "TEXTURE"
    scene.display.shading.show_cavity = True
    scene.render.resolution_x, scene.render.resolution_y = 640, 360


def cutscene_picture():
    """Tick 20 of `picture` (tests/data/cutscene/scripts) played in level12: the camera's shot of
    cut_cam_wide, the player on its box OBAN mid-walk, the props as the script moves them (left);
    the same frame of cut_cam_wide imported alone as a camera (OBAN frame 21: cm_anim shows frame
    1 on its first tick), over the level imported alone (right): the same view."""
    level = os.path.join(CUTSCENE, "level", "level12_Final.dat")
    tiles = []
    for alone in (False, True):
        scene = new_scene()
        workbench(scene)
        if alone:
            bpy.ops.import_anim.oban(filepath=level)
            for rig in [o for o in scene.objects if o.type == "ARMATURE"]:   # the class the level holds, at rest
                for obj in [rig, *rig.children]:
                    bpy.data.objects.remove(obj)
            bpy.ops.import_anim.oban(filepath=level,
                                     name_filter="cut_cam_wide", target="CAMERA", objects=False, environment=False,
                                     object_lists=False)
            scene.camera = next(o for o in scene.objects if o.type == "CAMERA")
            scene.frame_set(scene.frame_start + 21)
        else:
            bpy.ops.import_anim.oban(filepath=level, cutscene="picture", scripts=os.path.join(CUTSCENE, "scripts"))
            scene.frame_set(scene.frame_start + 20)
        tiles.append(rendered(scene))
    gap = np.ones((tiles[0].shape[0], 8, 4), np.float32)
    save(np.concatenate([tiles[0], gap, tiles[1]], axis=1), "cutscene.png")


def keyed_camera(scene, name, keys):
    """A camera with the game's field of view (45° vertical), Bezier-keyed at (frame, location, target) each."""
    camera = bpy.data.objects.new(name, bpy.data.cameras.new(name))
    camera.data.sensor_fit, camera.data.angle_y = "VERTICAL", np.pi / 4
    scene.collection.objects.link(camera)
    for at, location, target in keys:   # each turn the nearest to the last (no spin between keys)
        camera.location = location
        turn = (Vector(target) - Vector(location)).to_track_quat("-Z", "Y")
        camera.rotation_euler = turn.to_euler("XYZ", camera.rotation_euler)
        camera.keyframe_insert("location", frame=at)
        camera.keyframe_insert("rotation_euler", frame=at)
    return camera


def cutscene_export_picture():
    """A cutscene made in Blender in level12: two Bezier-keyed cameras cut by a marker at frame
    31, the player (the level's character, `oni_cutscene_character` "0") walking a Bezier path
    with its walk and punch TRAMs in NLA strips, the crate of script id 21 turning a quarter
    turn. Frame 44 of it through its camera (left); the same frame after the cutscene export and
    an import of the files it wrote, in a fresh scene (right)."""
    level, shown = os.path.join(CUTSCENE, "level", "level12_Final.dat"), 44
    scene = new_scene()
    workbench(scene)
    bpy.ops.import_anim.oban(filepath=level)
    scene.frame_start, scene.frame_end = 1, 60
    for at, camera in ((1, keyed_camera(scene, "wide", [(1, (2, -2, 4.5), (8, -12, 1)),
                                                        (30, (3, -2, 4.2), (8, -12, 1.2))])),
                       (31, keyed_camera(scene, "close", [(31, (6.0, -1.0, 5.2), (7.0, -9, 0.0)),
                                                          (60, (7.5, -1.0, 4.9), (7.6, -9, 0.0))]))):
        scene.timeline_markers.new(f"{camera.name} shot", frame=at).camera = camera
    character = next(o for o in scene.objects if o.type == "ARMATURE")
    character[CUTSCENE_CHARACTER] = "0"   # the player
    character.animation_data.action = None
    for at, location, turn in ((1, (4.5, -6, 0), 1.45), (30, (4.6, -6.1, 0), 1.55), (60, (4.8, -6.3, 0), 1.75)):
        character.location, character.rotation_euler = location, (0, 0, turn)   # the TRAMs carry it forward
        character.keyframe_insert("location", frame=at)
        character.keyframe_insert("rotation_euler", frame=at)
    track, at = character.animation_data.nla_tracks.new(), 1
    for name in ("char0_walk00", "char0_punch02"):
        action = bpy.data.actions[name]
        strip = track.strips.new(name, at, action)
        strip.action_frame_start = action.frame_range[0] + 1   # TRAM frame 1 on its first tick, as the game
        at = int(strip.frame_end) + 1
    crate = next(o for o in scene.objects if o.get(OBJECT_SCRIPT_ID) == 21)
    crate.rotation_mode = "XYZ"
    for at, turn in ((10, 0.0), (50, np.pi / 2)):
        crate.rotation_euler = (0, 0, turn)
        crate.keyframe_insert("rotation_euler", frame=at)
    scene.frame_set(shown)
    halves = [rendered(scene)]
    with tempfile.TemporaryDirectory() as folder:
        assert bpy.ops.export_anim.oni_cutscene(directory=folder, cutscene="made") == {"FINISHED"}
        print("  " + ", ".join(sorted(os.listdir(folder))))
        scene = new_scene()
        workbench(scene)
        bpy.ops.import_anim.oban(filepath=level, cutscene="made", scripts=folder)
    scene.frame_set(shown)
    halves.append(rendered(scene))
    gap = np.ones((halves[0].shape[0], 8, 4), np.float32)
    save(np.concatenate([halves[0], gap, halves[1]], axis=1), "cutscene_export.png")


PICTURES = {"level": level_picture, "environment": environment_picture, "relit": relit_picture,
            "door": door_picture, "motion": motion_picture, "character": character_picture, "body": body_picture,
            "sprites": sprite_picture, "cutscene": cutscene_picture, "cutscene_export": cutscene_export_picture,
            "rebuilt_placed": rebuilt_placed_picture}


def main():
    os.makedirs(OUT, exist_ok=True)
    oban_import.register()
    chosen = [name for name in sys.argv[1:] if name in PICTURES] or list(PICTURES)
    for name in chosen:
        PICTURES[name]()


if __name__ == "__main__":
    main()
