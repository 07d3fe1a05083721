"""Which fields of a Hugging Face ``config.json`` the reader looked at, and the unread ones it refuses.

A config keeps its many unrelated fields (generation settings, token ids, vision towers), which
``afd model`` lists as ignored. Two kinds of unread field are refused instead, naming the field: one
that would change the model (:data:`_UNREAD_CHANGES`), and one that reads as a misspelling of a field
the reader looked for and did not find (:data:`_TYPO_EDITS`).
"""
from __future__ import annotations

from pathlib import Path

from afdlib.errors import AfdError
from afdlib.inputs import checks


FLAGS = frozenset({"tie_word_embeddings", "use_mtp", "enable_moe_block", "use_sliding_window", "attention_k_eq_v",
                   "attn_output_gate", "attention_output_gate", "mla_use_output_gate", "use_sparse_attention",
                   "mtp_use_dedicated_embeddings", "use_double_wide_mlp"})
"""The true/false fields the reader looks at: a value other than JSON's true, false or null (the text
"no", which Python reads as true) is refused naming the field."""


class Recorder(dict):
    """The config, recording which of its fields the reader looked at (``afd model`` lists them);
    ``path`` names the file in a refusal."""

    def __init__(self, *a, path: Path | str = "config.json"):
        super().__init__(*a)
        self.read: set[str] = set()
        self.path = path
        self.first_of: dict[str, list] = {}   # fields given as a list where one number is read: the first taken

    def get(self, key, default=None):
        self.read.add(key)
        return self._checked(key, super().get(key, default))

    def __getitem__(self, key):
        self.read.add(key)
        return self._checked(key, super().__getitem__(key))

    def _checked(self, key, value):
        if key in FLAGS and value is not None and not isinstance(value, bool):
            raise AfdError(f"{self.path}: field '{key}' must be true or false, got {checks.show(value)}")
        return value

    def __contains__(self, key):
        self.read.add(key)
        return super().__contains__(key)


def scalar(cfg: dict, key: str, value, path: Path | str):
    """``value`` of field ``key`` where one number is read: the first entry of a list of one or two
    (ERNIE-VL's [text, vision] pairs), recorded on a :class:`Recorder` for ``afd model`` to say. An empty
    list, or a longer one (per-layer values, which are not read), is refused naming the field."""
    if not isinstance(value, list):
        return value
    if not 1 <= len(value) <= 2:
        raise AfdError(f"{path}: field '{key}' is a list of {len(value)} values where one number is read "
                       "(a [text, vision] pair at most; per-layer values are not read)")
    if isinstance(cfg, Recorder):
        cfg.first_of[key] = value
    return value[0]


# Fields that change the model when set and that no reading here uses, each with the value at which it
# changes nothing: refused naming the field, never dropped. Gemma 3n's KV-sharing layers' doubled MLP
# (their shared cache: hf_mixers.refuse_unknown_layout), its per-layer input embeddings; an MTP
# module's own embedding table; a gated attention where no hybrid layout places its full layers
# (mixers() reads the gate there); a block-sparse attention (MiniMax-M3's use_sparse_attention, also nested in its sparse_attention_config).
_UNREAD_CHANGES = {"use_double_wide_mlp": False, "hidden_size_per_layer_input": 0,
                   "mtp_use_dedicated_embeddings": False, "attn_output_gate": False, "mla_use_output_gate": False,
                   "attention_output_gate": False, "use_sparse_attention": False}
_TYPO_EDITS = 2
"""Edits (letters inserted, deleted or changed, case folded) within which an unread field is taken for a
misspelling of a field the reader looked for and did not find: 'n_shared_expert' for 'n_shared_experts',
'moe_intermediate_sise'. A field that is another one plus whole words ('intermediate_size' beside
'intermediate_size_mlp') is a field of its own; fields of under 6 letters are never taken for one."""


def _edits(a: str, b: str, most: int) -> int:
    """Levenshtein distance of ``a`` and ``b``, or ``most + 1`` once it exceeds ``most``."""
    if abs(len(a) - len(b)) > most:
        return most + 1
    row = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        prev, row[0] = row[0], i
        for j, y in enumerate(b, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (x != y))
        if min(row) > most:
            return most + 1
    return row[-1]


def _misspelling(key: str, wanted: list[str]) -> str | None:
    k = key.lower()
    for w in wanted:
        short, long = sorted((k, w.lower()), key=len)
        words = long.startswith(short + "_") or long.endswith("_" + short)
        if len(k) >= 6 and not words and _edits(k, w.lower(), _TYPO_EDITS) <= _TYPO_EDITS:
            return w
    return None


def refuse_unread(cfg: Recorder, path: Path) -> None:
    """Refuse a field that would change the model but is not read (:data:`_UNREAD_CHANGES`), and an unread
    field that reads as a misspelling of one the reader looked for and did not find (:data:`_TYPO_EDITS`)."""
    for key in FLAGS & set(dict.keys(cfg)):     # read or not: a true/false field never holds text
        cfg._checked(key, dict.get(cfg, key))
    unread = [k for k in dict.keys(cfg) if k not in cfg.read and k != "text_config"]
    sparse = dict.get(cfg, "sparse_attention_config")
    if "sparse_attention_config" in unread and isinstance(sparse, dict) and sparse.get("use_sparse_attention"):
        raise AfdError(f"{path}: field 'sparse_attention_config' makes the attention block-sparse, and afd does not "
                       "read it; the model would be read as full attention")
    for key in unread:
        if key in _UNREAD_CHANGES and dict.get(cfg, key) not in (None, _UNREAD_CHANGES[key]):
            raise AfdError(f"{path}: field '{key}' ({checks.show(dict.get(cfg, key))}) changes the model, and afd "
                           "does not read it; the model would be wrong without it")
    wanted = sorted(k for k in cfg.read if "." not in k and not dict.__contains__(cfg, k))
    for key in unread:
        near = _misspelling(key, wanted) if dict.get(cfg, key) is not None else None
        if near:
            raise AfdError(f"{path}: field '{key}' is not one afd reads; did you mean '{near}'?")
