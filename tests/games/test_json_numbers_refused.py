"""NaN, infinities and whole numbers too long to read, in a results file, named in one line.

``json.loads`` takes ``NaN`` and ``Infinity`` (no file of ours holds them:
they are written as ``null``) and raises a bare ``ValueError`` ("Exceeds the
limit (4300 digits) ...") on a 5000-digit whole number. Both are refused by
the readers naming the file and the command that rewrites it: in
``tournament.json`` (``werewolf view``), in ``decisions.json`` (a ``+cfr:``
agent's policy), and on a line of a JSON-lines export.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from games.werewolf.players.cfr_policy import load_day_policy
from runs.atomic import ResultsError
from runs.readers import read_jsonl
from tests.cli_runner import run_cli

LONG = "7" * 5000
#: name -> (JSON text, a word of the one-line refusal)
VALUES = {
    "5000 digits": (LONG, "more than 4,300 digits"),
    "NaN": ("NaN", "NaN is not valid JSON"),
    "Infinity": ("-Infinity", "-Infinity is not valid JSON"),
}


@pytest.mark.parametrize("name", sorted(VALUES))
def test_in_tournament_json_under_werewolf_view(name, tmp_path):
    value, words = VALUES[name]
    out = tmp_path / "T"
    (out / "logs").mkdir(parents=True)
    (out / "tournament.json").write_text(f'{{"games": {value}, "pairs": []}}', encoding="utf-8")
    proc = run_cli(["werewolf", "view", str(out)])
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and len(lines) == 1, proc.stderr
    assert "tournament.json" in lines[0] and words in lines[0], lines[0]
    assert lines[0].endswith(f"re-run gt-llm werewolf tournament --out {out}"), lines[0]
    assert len(lines[0]) < 400 and "sys.set_int_max_str_digits" not in lines[0]


@pytest.mark.parametrize("name", sorted(VALUES))
def test_in_decisions_json_of_a_cfr_agent(name, tmp_path):
    value, words = VALUES[name]
    folder = tmp_path / "day"
    folder.mkdir()
    (folder / "decisions.json").write_text(f'{{"days": [{value}]}}', encoding="utf-8")
    (folder / "summary.json").write_text("{}", encoding="utf-8")
    with pytest.raises(ValueError) as err:
        load_day_policy(folder, "gratr")
    message = str(err.value)
    assert message.startswith(f"load_day_policy: decisions.json in {folder}"), message
    assert words in message and f"gt-llm werewolf solve --out {folder}" in message, message
    assert "\n" not in message


@pytest.mark.parametrize("name", sorted(VALUES))
def test_on_a_line_of_a_jsonl_export(name, tmp_path):
    value, words = VALUES[name]
    path = tmp_path / "dialogues_tone.jsonl"
    path.write_text(json.dumps({"a": 1}) + f'\n{{"b": {value}}}\n', encoding="utf-8")
    with pytest.raises(ResultsError) as err:
        read_jsonl(path, rerun="`gt-llm fruit-trading run`")
    message = str(err.value)
    assert message.startswith(f"{Path(path)}:2: ") and words in message, message
    assert message.endswith("re-run `gt-llm fruit-trading run`"), message
