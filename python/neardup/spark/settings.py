"""The settings of a run: ``neardup dedup``'s, resolved once on the driver, and the ones
the distributed job refuses."""

from __future__ import annotations

from typing import Any, Dict, Optional, Tuple

import neardup

FIELD_KEYS = ("id_field", "text_field", "html_field", "url_field")
"""The keywords naming the record's fields (``id``, ``text``, ``html``, ``url``)."""

_UNSUPPORTED = {
    "boilerplate": lambda v: bool(v),
    "high_recall": lambda v: v is not None,
    "keep": lambda v: v not in (None, "first"),
    "candidates": lambda v: v not in (None, "broder"),
}


def resolve(params: Dict[str, Any]) -> Tuple[Dict[str, Any], Dict[str, str]]:
    """Splits ``params`` into the algorithm's settings and the field names, with a
    ``config="FILE.toml"`` read here, once, on the driver (keys as the flags without the
    leading dashes; a keyword given beside it wins, as a flag beside ``--config``
    does): what the executors get is the settings themselves, never the file's name.
    Settings the distributed job cannot honour are refused, from the file too
    (``ValueError``), and the rest validated by :class:`neardup.Pipeline`."""
    params = dict(params)
    path = params.pop("config", None)
    if path is not None:
        try:
            import tomllib
        except ImportError:  # Python < 3.11
            import tomli as tomllib  # type: ignore[no-redef]

        try:
            with open(path, "rb") as f:
                table = tomllib.load(f)
        except (OSError, tomllib.TOMLDecodeError) as e:
            raise ValueError(f"{path}: cannot read the configuration: {e}") from None
        params = {**{k.replace("-", "_"): v for k, v in table.items()}, **params}
    for k, bad in _UNSUPPORTED.items():
        if k in params and bad(params[k]):
            raise ValueError(f"neardup.spark: {k}={params[k]!r} is not supported by the Spark job yet")
    fields = {k: params.pop(k) for k in FIELD_KEYS if k in params}
    neardup.Pipeline(**params, **fields)  # validates every value
    return params, fields


def sketch_meta(params: Dict[str, Any]) -> Dict[str, Any]:
    """What the sketches are made with (checked against saved sketches)."""
    p = neardup.Pipeline(**params)
    return {"sketch_config": p.sketch_config, "stage_one": p.describe()[0]}


def site_field(params: Dict[str, Any]) -> Optional[str]:
    """The column ``site="field:NAME"`` names, if it does."""
    site = params.get("site")
    return site[len("field:"):] if isinstance(site, str) and site.startswith("field:") else None


def field_names(fields: Dict[str, str]) -> Dict[str, str]:
    """Each field keyword's column (``id_field`` → ``id`` unless renamed)."""
    return {k: fields.get(k, k.split("_")[0]) for k in FIELD_KEYS}
