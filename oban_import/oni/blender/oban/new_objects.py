"""The pool of new objects an import's animations need (an Empty or a Camera, each with an
empty action): made before anything is built, all together, in the order Blender files them
fastest; handed out in file order with each one's motion and description."""

from dataclasses import dataclass

import bpy

from ....blender.datablocks import fast_order
from ...io.oban.properties import descriptions
from ..shared.empties import new_empty
from . import motion as oban_motion
from .cameras import new_camera


@dataclass
class NewObject:
    motion: object       # oban_motion.motions_of()'s
    action: object       # a new, empty action made for it
    described: tuple     # its custom properties: oban.properties.descriptions()'s


class NewObjects:
    """The new object (Empty or Camera) and empty action of every animation that needs one,
    made before anything is built, in the order Blender files them fastest; handed out in
    file order with its motion and description, computed as they are taken. Once computing
    one failed, every later take fails alike (each file that needs one is refused, with the
    cause). `remove_untaken` removes what a failure left unused."""

    def __init__(self, animations, settings):
        self.made = iter(make_objects([a.name for a in animations], settings))
        self.motions = oban_motion.motions_of(animations, settings, camera=settings.target == "CAMERA", written=True)
        self.descriptions = descriptions(animations)
        self.error = None

    def take(self, taken):
        """(object, NewObject) of the next animation; the object and action are added to
        `taken` first, so that whoever takes them also removes them."""
        if self.error is None:
            try:
                moved_by, described = next(self.motions), next(self.descriptions)
            except Exception as error:   # a bug, or no memory
                self.error = error
        if self.error is not None:
            raise self.error
        obj, action = next(self.made)
        taken.append((obj, action))
        return obj, NewObject(moved_by, action, described)

    def remove_untaken(self):
        for obj, action in self.made:
            remove_new(obj, action)


def make_objects(names, settings):
    """(object, empty action) for each new object, in the order of `names`, all made
    together in the order Blender files them fastest (datablocks.fast_order); on failure,
    none."""
    make = new_camera if settings.target == "CAMERA" else new_empty
    objects, actions = [None] * len(names), [None] * len(names)
    try:
        for i in fast_order(max(len(bpy.data.objects), len(bpy.data.actions)), names):
            objects[i] = make(names[i], settings.global_scale)
            actions[i] = bpy.data.actions.new(names[i])
    except Exception:
        for obj, action in zip(objects, actions):
            remove_new(obj, action)
        raise
    return list(zip(objects, actions))


def remove_new(obj, action):
    """A new object made for an animation (with its camera) and its action; None: not made."""
    if obj is not None:
        camera = obj.data
        bpy.data.objects.remove(obj)
        if camera is not None:
            bpy.data.cameras.remove(camera)
    if action is not None:
        bpy.data.actions.remove(action)
