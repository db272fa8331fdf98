"""The Translate page's stepping logic (pages/ui/player.py), on a plain dict as session state."""

from pages.ui.player import StepPlayer, branch_key, forget_picks_of_other_sentences


def test_previous_and_next_stay_within_the_steps():
    state = {}
    player = StepPlayer(state, total=3)
    assert player.step == 1 and not player.playing
    player.move(-1)
    assert state["step"] == 1
    for expected in (2, 3, 3):
        player.move(1)
        assert player.step == expected


def test_a_step_beyond_a_shorter_sentence_starts_over():
    state = {"step": 9}
    assert StepPlayer(state, total=4).step == 1


def test_play_advances_once_per_tick_and_stops_at_the_end():
    state = {}
    player = StepPlayer(state, total=3)
    player.toggle()
    assert player.playing and player.take_toggle() and not player.take_toggle()  # one full rerun per press
    assert [player.tick() for _ in range(3)] == [False, False, True]  # True: stopped, rerun to stop the timer
    assert player.step == 3 and not player.playing and player.tick() is False


def test_play_from_the_last_step_starts_at_the_first_and_pause_keeps_the_step():
    state = {"step": 3}
    player = StepPlayer(state, total=3)
    player.toggle()
    assert player.step == 1 and player.playing
    player.tick()
    player.toggle()
    assert not player.playing and player.step == 2 and player.tick() is False and player.step == 2


def test_branch_picks_belong_to_their_model_and_sentence():
    state = {branch_key(0): "你", branch_key(3): "他", "text": "kept"}
    forget_picks_of_other_sentences(state, ("model-a", "Tom is tall."))
    assert branch_key(0) not in state and branch_key(3) not in state and state["text"] == "kept"
    state[branch_key(1)] = "我"
    forget_picks_of_other_sentences(state, ("model-a", "Tom is tall."))
    assert state[branch_key(1)] == "我"  # same sentence: the pick stays
    forget_picks_of_other_sentences(state, ("model-b", "Tom is tall."))
    assert branch_key(1) not in state  # another model: it goes
