"""Agent names and the log folders of pairs: no two pairs can share ``logs/<A>_vs_<B>``.

A pair's games are logged in ``logs/<A>_vs_<B>/``. A name holding ``_vs_``
(or starting with ``vs_``, or ending in ``_vs``) would let two pairs write
one folder (``x_vs_y`` against ``z`` and ``x`` against ``y_vs_z``), the
later pair's logs replacing the earlier's. Such a name is refused in one line
by ``werewolf tournament --agents`` and ``werewolf arena --models``, before
anything is written; every other name keeps the folders apart (checked
exhaustively over short names).
"""

from __future__ import annotations

import itertools

import pytest

from games.werewolf.agents import PAIR_SEPARATOR, parse_agents, shares_pair_folders
from tests.cli_runner import run_cli

TINY = ("--games", "2", "--max-rounds", "1", "--no-progress")


@pytest.mark.parametrize("name", ["x_vs_y", "vs_x", "x_vs", "a_vs_b_vs_c"])
def test_a_name_that_could_join_two_pairs_is_refused(name):
    with pytest.raises(ValueError) as err:
        parse_agents(f"{name}=none,rules")
    msg = str(err.value)
    assert "\n" not in msg and msg.startswith("--agents: agent name")
    assert repr(name) in msg and "_vs_" in msg and "name it e.g." in msg
    suggested = msg.rsplit("name it e.g. ", 1)[1].split("=", 1)[0]
    assert not shares_pair_folders(suggested)
    parse_agents(f"{suggested}=none,rules")  # the suggestion is accepted


@pytest.mark.parametrize("name", ["x_v_y", "versus", "vs", "x_", "_x", "vsx", "x-vs-y", "xvs_"])
def test_other_names_are_accepted(name):
    assert parse_agents(f"{name}=none,rules")[0].name == name


def test_accepted_names_never_share_a_pair_folder():
    # Every name of up to four characters over x, _, v, s that the check accepts:
    # each ordered pair's folder name is that pair's alone.
    names = [
        "".join(chars)
        for n in range(1, 5)
        for chars in itertools.product("x_vs", repeat=n)
        if not shares_pair_folders("".join(chars))
    ]
    assert "x_" in names and "vs" in names and "x__vs" not in names
    folders: dict[str, tuple[str, str]] = {}
    for a, b in itertools.permutations(names, 2):
        folder = f"{a}{PAIR_SEPARATOR}{b}"
        assert folders.setdefault(folder, (a, b)) == (a, b), folder


@pytest.mark.parametrize(
    "command",
    [
        ("werewolf", "tournament", "--agents", "x_vs_y=none,x=rules,y_vs_x=dirichlet"),
        ("werewolf", "tournament", "--agents", "x__vs=none,y=rules,x_=dirichlet,vs_y=gratr"),
        ("werewolf", "arena", "--models", "x_vs_y=none,x=rules,y_vs_x=dirichlet"),
    ],
)
def test_the_commands_refuse_such_names_before_writing(tmp_path, command):
    out = tmp_path / "out"
    done = run_cli([*command, *TINY, "--out", str(out)])
    assert done.returncode == 2, (done.stdout, done.stderr)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "could make two pairs share a log folder" in lines[0], lines
    assert not out.exists()
