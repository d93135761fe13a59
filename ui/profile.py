"""A per-block profile (block 1 .. L) in words, by the one rule of :func:`analysis.depth.depth_profile`.

The Pre vs Post page and the Training lab's race both describe gradient norms by depth with it, so the two
pages never disagree about what a profile shows.
"""

from __future__ import annotations

from typing import Sequence

import analysis
from ui.format import number
from ui.i18n import t


def profile_sentence(name: str, values: Sequence[float]) -> str:
    """``"**name**: block 1 → block 2: a → b (…); blocks 2 → L: b → c (…)."``, or "" when the profile has fewer
    than two blocks or a value that is not finite and positive."""
    p = analysis.depth_profile(values)
    if "step" not in p:
        return ""
    step = t(f"profile.step.{p['step_kind']}", r=number(max(p["step"], 1 / p["step"]), ".2g"))
    text = t("profile.two", name=name, first=number(p["first"], ".3g"), second=number(p["second"], ".3g"),
             step=step)
    if p["L"] >= 3:
        rest = t(f"profile.rest.{p['rest_kind']}", spread=number(p["rest_spread"], ".3g"),
                 ratio=number(p["rest_ratio"], ".2g"), lowest=p["rest_lowest"], highest=p["rest_highest"])
        text += t("profile.then", L=p["L"], second=number(p["second"], ".3g"), last=number(p["last"], ".3g"), rest=rest)
    return text + t("profile.end")
