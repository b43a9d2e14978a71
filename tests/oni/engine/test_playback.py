"""The playback simulator against docs/engine.md 3 taken literally, and engine_frames against closed forms."""

from random import Random

import numpy as np
import pytest

from oban_import.oni.engine.playback import Player, engine_frames, engine_keys, random_start_frame, value_at
from oban_import.oni.io.oban.record import AUTOSTART, LOCALIZED, LOOP, PINGPONG, RANDOM_START

FRAME_COUNTS = [1, 2, 3, 5, 48, 100]


def shown(player, ticks):
    """The frame shown now, then after each of `ticks` ticks."""
    frames = [player.frame]
    for _ in range(ticks):
        player.tick()
        frames.append(player.frame)
    return frames


def started(frames, flags):
    player = Player(frames, flags)
    player.start()
    return player


def test_spec_examples():
    assert shown(started(4, LOOP), 9) == [0, 1, 2, 3, 0, 1, 2, 3, 0, 1]
    assert shown(started(4, PINGPONG), 11) == [0, 1, 2, 3, 3, 2, 1, 0, 0, 1, 2, 3]
    assert shown(started(4, 0), 6) == [0, 1, 2, 3, 3, 3, 3]


@pytest.mark.parametrize("frames", FRAME_COUNTS)
def test_three_periods_of_loop_pingpong_and_plain(frames):
    one_loop = list(range(frames))
    one_pingpong = one_loop + one_loop[::-1]
    assert shown(started(frames, LOOP), 3 * frames - 1) == one_loop * 3
    assert shown(started(frames, PINGPONG), 6 * frames - 1) == one_pingpong * 3
    plain = started(frames, 0)
    assert shown(plain, 3 * frames - 1) == one_loop + [frames - 1] * 2 * frames
    assert not plain.playing


@pytest.mark.parametrize("flags", [LOOP, PINGPONG, LOOP | PINGPONG])
def test_loop_and_pingpong_never_end(flags):
    player = started(7, flags)
    assert not any(player.tick() for _ in range(100)) and player.playing


def test_plain_ends_once_and_holds():
    player = started(5, 0)
    ended = [player.tick() for _ in range(12)]
    assert ended == [False] * 4 + [True] + [False] * 7
    assert player.frame == 4 and not player.playing


def test_frame_below_zero_stops_unless_pingpong():
    player = started(5, LOOP)
    player.step = -1
    assert player.tick() and (player.frame, player.playing) == (0, False)


def test_door_stops_at_the_open_frame_then_closes_to_the_end():
    door = Player(100, LOCALIZED)
    door.play_from(0, 50)
    ended = [door.tick() for _ in range(60)]
    assert ended.index(True) == 49 and ended.count(True) == 1
    assert (door.frame, door.playing) == (50, False)
    door.play_from(door.frame)
    assert door.stop_frame == 0
    assert shown(door, 60) == list(range(50, 100)) + [99] * 11
    assert not door.playing


def test_door_closing_as_the_engine_does_with_the_frame_count_as_stop():
    door = Player(100, LOCALIZED)
    door.play_from(50, 100)
    assert shown(door, 55) == list(range(50, 100)) + [99] * 6


def test_stop_frame_on_loop_and_pingpong():
    loop = started(10, LOOP)
    loop.set_stop_frame(4)
    assert shown(loop, 9) == [0, 1, 2, 3, 0, 1, 2, 3, 0, 1]
    pingpong = started(10, PINGPONG)
    pingpong.set_stop_frame(4)
    assert shown(pingpong, 8) == [0, 1, 2, 3, 9, 9, 9, 9, 9]
    assert pingpong.playing


def test_start_keeps_the_stop_frame():
    player = Player(10, 0)
    player.set_stop_frame(3)
    player.start()
    assert shown(player, 5) == [0, 1, 2, 3, 3, 3]


def test_autostart_starts_and_moves_on_the_next_tick():
    player = Player(6, AUTOSTART)
    assert not player.playing
    assert player.tick() is False
    assert player.playing and player.frame == 1


def test_plain_autostart_restarts_after_the_end():
    player = Player(4, AUTOSTART)
    assert shown(player, 8) == [0, 1, 2, 3, 3, 1, 2, 3, 3]


def test_without_autostart_nothing_moves():
    player = Player(6, LOOP)
    assert shown(player, 5) == [0] * 6 and not player.playing


def test_random_start_is_seeded_in_range_and_reproducible():
    for frames in FRAME_COUNTS:
        starts = [random_start_frame(frames, seed) for seed in range(50)]
        assert all(0 <= f < frames for f in starts)
        assert starts == [random_start_frame(frames, seed) for seed in range(50)]
    assert len({random_start_frame(100, seed) for seed in range(50)}) > 10


def engine_start_odds(frames):
    """(frames,) the odds of each start frame in the engine: OBrAnim_Reset starts a RandomStart
    animation on UUmRandomRange(0, frames) = (frames * r) >> 16, r = UUrRandom(), a 16-bit
    number (hogsy/OniFoxed BFW_Object.c, BFW.h, BFW_Utility.c)."""
    return np.bincount((frames * np.arange(1 << 16)) >> 16, minlength=frames) / (1 << 16)


@pytest.mark.parametrize("frames", [1, 2, 3, 5, 7, 48, 100])
def test_random_start_gives_the_engines_start_frames_at_its_odds(frames):
    """Over 6000 seeds (as the importer names them), the start frames are those the engine can
    start on, every frame 0 .. frames - 1, the last too, each about as often as there."""
    odds = engine_start_odds(frames)
    assert len(odds) == frames and (odds > 0).all()
    starts = np.array([random_start_frame(frames, f"{seed}:anim") for seed in range(6000)])
    assert set(starts.tolist()) == set(np.flatnonzero(odds).tolist())
    counts = np.bincount(starts, minlength=frames)
    assert np.abs(counts / len(starts) - odds).max() < 5 * np.sqrt(odds.max() / len(starts))


@pytest.mark.parametrize("frames", [2, 3, 40, 255, 1000])
def test_some_seed_starts_on_the_last_frame(frames):
    assert engine_start_odds(frames)[-1] > 0
    assert any(random_start_frame(frames, seed) == frames - 1 for seed in range(50 * frames))


def test_random_start_uses_the_given_generator():
    player = Player(100, RANDOM_START | LOOP)
    player.start(Random(7))
    assert player.frame == random_start_frame(100, 7) == Random(7).randrange(100)
    first = player.frame
    player.tick()
    assert player.frame == (first + 1) % 100


def test_autostart_with_random_start_draws_from_the_players_generator():
    player = Player(100, RANDOM_START | AUTOSTART | LOOP, Random(3))
    player.tick()
    assert player.frame == (Random(3).randrange(100) + 1) % 100


def test_bad_arguments():
    with pytest.raises(ValueError):
        Player(0, LOOP)
    with pytest.raises(ValueError):
        engine_frames(5, LOOP, 5)
    with pytest.raises(ValueError):
        Player(5, 0).set_stop_frame(-1)


def test_engine_frames_shapes():
    assert engine_frames(5, LOOP, 2) == ([2, 3, 4, 0, 1], 5)
    assert engine_frames(3, PINGPONG) == ([0, 1, 2, 2, 1, 0], 6)
    assert engine_frames(3, PINGPONG, 2) == ([2, 2, 1, 0, 0, 1], 6)
    assert engine_frames(5, 0, 2) == ([2, 3, 4], None)
    assert engine_frames(1, LOOP) == ([0], 1)
    assert engine_frames(1, PINGPONG) == ([0, 0], 2)
    assert engine_frames(1, 0) == ([0], None)


@pytest.mark.parametrize("flags", [LOOP, PINGPONG, 0, LOOP | PINGPONG, LOOP | LOCALIZED])
@pytest.mark.parametrize("frames", FRAME_COUNTS)
def test_engine_frames_agrees_with_three_periods_of_ticking(frames, flags):
    for start_frame in sorted({0, frames // 2, frames - 1}):
        sequence, period = engine_frames(frames, flags, start_frame)
        player = Player(frames, flags)
        player.play_from(start_frame)
        if period is None:
            assert shown(player, 3 * frames) == sequence + [frames - 1] * (3 * frames + 1 - len(sequence))
        else:
            assert len(sequence) == period
            assert shown(player, 3 * period - 1) == sequence * 3


@pytest.mark.parametrize("flags", [AUTOSTART, RANDOM_START, AUTOSTART | RANDOM_START])
def test_engine_frames_plays_only_loop_and_pingpong(flags):
    for base in (0, LOOP, PINGPONG):
        assert engine_frames(9, base | flags, 4) == engine_frames(9, base, 4)


def test_engine_frames_against_closed_forms():
    for frames in list(range(1, 40)) + [100, 255, 1000]:
        for start_frame in sorted({0, 1 % frames, frames // 3, frames // 2, max(frames - 2, 0), frames - 1}):
            loop, loop_period = engine_frames(frames, LOOP, start_frame)
            assert loop_period == frames
            assert loop == [(start_frame + i) % frames for i in range(frames)]

            pingpong, pingpong_period = engine_frames(frames, PINGPONG, start_frame)
            assert pingpong_period == 2 * frames
            mirrored = [(start_frame + i) % (2 * frames) for i in range(2 * frames)]
            assert pingpong == [k if k < frames else 2 * frames - 1 - k for k in mirrored]

            plain, plain_period = engine_frames(frames, 0, start_frame)
            assert plain_period is None
            assert plain == list(range(start_frame, frames))


def shows_what_the_engine_plays(times, columns, frames, flags, start, key_times, key_columns, period):
    """Keys laid out by engine_keys, blended LINEAR (and repeated by a Cycles modifier where there
    is a period), show at each tick, over three periods, the blend of the file's keys at the OBAN
    frame the engine shows on it (docs/engine.md 2: the nearest end key beyond the keys)."""
    sequence, engine_period = engine_frames(frames, flags, start)
    assert period == engine_period
    for tick in range(3 * len(sequence) + 2):
        at = key_times[0] + (tick - key_times[0]) % period if period else tick
        shown = sequence[tick % len(sequence)] if period else sequence[min(tick, len(sequence) - 1)]
        np.testing.assert_allclose(value_at(key_times, key_columns, at), value_at(times, columns, shown),
                                   atol=1e-12)


KEYS_FLAGS = [0, LOCALIZED | AUTOSTART, LOOP, PINGPONG, LOOP | PINGPONG]


@pytest.mark.parametrize("flags", KEYS_FLAGS)
def test_a_start_on_a_key_gives_one_key_a_time(flags):
    """Started exactly on one of its keys (a random or offset start), an animation's keys are laid
    out one a time, increasing (two keys at one time would make a jump in Blender); a plain one
    shows that key on tick 0 and each later key as many ticks after as it is frames after."""
    times, columns = np.array([0.0, 4.0, 9.0, 15.0, 19.0]), np.arange(15.0).reshape(5, 3)
    for k, start in enumerate(times.astype(int).tolist()):
        key_times, key_columns, period = engine_keys(times, columns, 20, flags, start)
        assert (np.diff(key_times) > 0).all(), (start, key_times)
        if not flags & (LOOP | PINGPONG):
            assert key_times.tolist() == (times[k:] - start).tolist()
            assert np.array_equal(key_columns, columns[k:])
        shows_what_the_engine_plays(times, columns, 20, flags, start, key_times, key_columns, period)


@pytest.mark.parametrize("flags", KEYS_FLAGS)
def test_a_random_start_on_a_key_gives_one_key_a_time(flags):
    """An animation keyed on every frame starts on a key whatever frame RandomStart draws."""
    rng = np.random.default_rng(flags)
    for frames in (1, 2, 7, 30):
        times, columns = np.arange(float(frames)), rng.normal(size=(frames, 4))
        for seed in range(12):
            start = random_start_frame(frames, seed)
            key_times, key_columns, period = engine_keys(times, columns, frames, flags | RANDOM_START, start)
            assert (np.diff(key_times) > 0).all(), (frames, start, key_times)
            if period is None:
                assert len(key_times) == frames - start
            shows_what_the_engine_plays(times, columns, frames, flags, start, key_times, key_columns, period)


@pytest.mark.parametrize("flags", KEYS_FLAGS)
@pytest.mark.parametrize("frames, times", [(1, [3.0]), (1, [0.0, 2.0]), (10, [0.0, 9.0, 12.0]),
                                           (10, [2.0, 5.0, 14.0, 20.0]), (10, [11.0, 15.0])])
def test_keys_past_the_last_frame_end_there(flags, frames, times):
    """Keys past frames - 1 (warned: docs/bad_input.md) are never shown: the keys laid out end on
    frames - 1 (a loop's closing key aside; a ping-pong's mirror after it), one a time, and show
    what the engine plays."""
    times = np.array(times)
    columns = np.random.default_rng(frames).normal(size=(len(times), 3))
    for start in sorted({0, frames // 2, frames - 1}):
        key_times, key_columns, period = engine_keys(times, columns, frames, flags, start)
        assert (np.diff(key_times) > 0).all(), (start, key_times)
        if not flags & PINGPONG:
            assert (key_times[:-1] if period else key_times).max() + start == frames - 1
        shows_what_the_engine_plays(times, columns, frames, flags, start, key_times, key_columns, period)


@pytest.mark.parametrize("seed", range(40))
def test_engine_keys_blended_and_cycled_show_what_the_engine_plays(seed):
    """For every flag and start frame, on keys inside the frames."""
    rng = np.random.default_rng(seed)
    frames = int(rng.integers(1, 30))
    times = np.sort(rng.choice(frames, int(rng.integers(1, frames + 1)), replace=False)).astype(np.float64)
    columns = rng.normal(size=(len(times), 3))
    flags, start = int(rng.choice([0, LOOP, PINGPONG, LOOP | PINGPONG])), int(rng.integers(0, frames))
    key_times, key_columns, period = engine_keys(times, columns, frames, flags, start)
    shows_what_the_engine_plays(times, columns, frames, flags, start, key_times, key_columns, period)
