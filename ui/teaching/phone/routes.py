"""The phone page's HTTP routes, mounted beside the Streamlit app by ``app.py`` (one process, one port).

Each route is request -> the class store / the view -> response, and refuses what it cannot take before it costs
anything: a malformed code or body, a client over its rate, a student without the cookie.

* ``GET /join`` and ``GET /join/<CODE>``: the page (HTML in the reader's language, ``?lang=zh|en``, else the
  browser's ``Accept-Language``), its script and style, and plotly.js from the ``plotly`` package (offline).
* ``POST /join/api/<CODE>/join``: join (or rejoin) the class; the student's random id is an HttpOnly, SameSite
  cookie set here (page scripts never read it). Joins are limited per client address.
* ``GET /join/api/<CODE>/state``: the class's view (:mod:`ui.teaching.phone.view`) with an ``ETag``; a phone polls
  with ``If-None-Match`` and gets ``304`` until the step, the reveal or the end changes.
* ``POST /join/api/<CODE>/answer``: ``{"question": id, "value": option index or number}``.
* ``GET /join/api/<CODE>/figure/<question>``: the lesson step's chart (Plotly JSON) once revealed.
* ``POST /join/api/<CODE>/lecturer``: the lecturer's page asks for its HttpOnly cookie (the secret checked).

A store that cannot be reached answers ``503`` with ``retry``: the phone keeps its answer and tries again; no
error ever takes a student out of the class.
"""

from __future__ import annotations

import gzip
import json
from functools import lru_cache
from pathlib import Path

import plotly
import sqlalchemy.exc
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from teaching.classroom import (BadInput, ClassEnded, ClassError, ClassExpired, NotJoined, StoreUnavailable, TooManyJoins,
                                UnknownClass, new_student_id)
from teaching.classroom.limits import KeyedLimiter
from ui.caches.classroom import store
from ui.i18n import catalogs, t
from ui.teaching.class_mode import COOKIE_LECTURER, COOKIE_STUDENT, ERROR_TEXT, clean_code
from ui.teaching.phone.view import class_view, figure, html, my_part, version_in
from ui.teaching.phone.pacing import note_seen
from ui.teaching.phone.watch import changes

STATIC = Path(__file__).parent / "static"
PLOTLY_JS = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"
MAX_BODY = 2048  # bytes of an answer or a join: an option index or a number, nothing more
COOKIE_AGE_S = 13 * 3600  # a class lasts 12 hours
ANSWERS_PER_STUDENT = (12, 10.0)
MAX_WAIT_S = 25.0  # a held poll's longest wait (under nginx's 60 s proxy_read_timeout)  # answers per student in seconds (joins: the store's limit per client address)


_answers = KeyedLimiter(*ANSWERS_PER_STUDENT)
_lecturers = KeyedLimiter(10, 60.0)  # lecturer cookies a client address may ask for a minute


# ---- the request's facts ---------------------------------------------------------------------------------------
def lang_of(request: Request) -> str:
    asked = request.query_params.get("lang")
    if asked in ("en", "zh"):
        return asked
    return "zh" if request.headers.get("accept-language", "").lower().startswith("zh") else "en"


def student_of(request: Request) -> str | None:
    sid = request.cookies.get(COOKIE_STUDENT)
    return sid if sid and 8 <= len(sid) <= 64 and all(c.isalnum() or c in "-_" for c in sid) else None


def address_of(request: Request) -> str:
    """The client's address; behind the nginx recipe (a loopback peer) the first ``X-Forwarded-For`` entry."""
    peer = request.client.host if request.client else "?"
    forwarded = request.headers.get("x-forwarded-for")
    if forwarded and peer in ("127.0.0.1", "::1", "::ffff:127.0.0.1"):
        return forwarded.split(",")[0].strip()
    return peer


def refuse(status: int, key: str, lang: str, code: str = "", **extra) -> JSONResponse:
    return JSONResponse({"error": key, "message": html(t(key, lang, code=code)), **extra}, status)


def store_error(err: Exception, lang: str, code: str) -> JSONResponse:
    """A store refusal in the reader's words (409/404/410/429), or ``503`` with ``retry`` when it cannot be reached
    (the phone keeps its answer and tries again)."""
    if isinstance(err, StoreUnavailable):
        return JSONResponse({"error": "class.err.unavailable", "retry": True,
                             "message": html(t("class.err.unavailable", lang, seconds=int(err.seconds)))}, 503)
    key = next((key for kind, key in ERROR_TEXT if isinstance(err, kind)), None)
    if key is not None:
        status = (404 if isinstance(err, UnknownClass) else 410 if isinstance(err, (ClassEnded, ClassExpired))
                  else 429 if isinstance(err, TooManyJoins) else 409)
        return refuse(status, key, lang, code)
    if isinstance(err, NotJoined):
        return refuse(401, "class.err.unknown", lang, code, rejoin=True)
    if isinstance(err, BadInput):
        return JSONResponse({"error": "class.err.bad_input",
                             "message": html(t("class.err.bad_input", lang, error=str(err)))}, 400)
    return JSONResponse({"error": "class.err.store", "retry": True,
                         "message": html(t("class.err.store", lang, error=type(err).__name__))}, 503)


async def body_of(request: Request) -> dict | None:
    """A small JSON object (the page's own ``fetch`` sends ``application/json``: a cross-site form cannot)."""
    if not request.headers.get("content-type", "").startswith("application/json"):
        return None
    origin = request.headers.get("origin")
    if origin and not _same_host(request, origin):
        return None
    raw = b""
    async for chunk in request.stream():
        raw += chunk
        if len(raw) > MAX_BODY:
            return None
    try:
        data = json.loads(raw or b"{}")
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def _same_host(request: Request, origin: str) -> bool:
    """The page that sent the request is this server's (a proxy may change the scheme and the port the server
    sees, as the nginx recipe's ``Host $host`` does, never the host name)."""
    def name(host: str | None) -> str | None:
        return host.rsplit("]", 1)[0] + "]" if host and host.startswith("[") else host.split(":")[0] if host else None
    asked = name(origin.split("://", 1)[-1].split("/", 1)[0])
    return asked is not None and asked in (name(request.headers.get("host")), name(request.headers.get("x-forwarded-host")))


# ---- the page and its files ------------------------------------------------------------------------------------
PAGE_KEYS = ("phone.", "class.reveal_", "class.poll_result_mine", "class.err.", "class.ended", "class.dist_")


@lru_cache(maxsize=4)
def page_html(lang: str) -> str:
    words = {k: v for k, v in catalogs()[lang].items() if k.startswith(PAGE_KEYS)}
    text = (STATIC / "phone.html").read_text(encoding="utf-8")
    data = json.dumps(words, ensure_ascii=False).replace("</", "<\\/")
    return (text.replace("{{LANG}}", "zh-CN" if lang == "zh" else "en").replace("{{TITLE}}", t("phone.page_title", lang))
            .replace("{{WORDS}}", data).replace("{{PLOTLY}}", plotly.__version__))


def page(request: Request) -> Response:
    """The phone page. It gives a new phone its student id (the cookie) with the page, before any join: a join whose
    answer is lost (a phone leaving the page, a dropped network) is then the same student when it joins again, not
    a second one in the class's count."""
    response = HTMLResponse(page_html(lang_of(request)), headers={"Cache-Control": "private, no-cache"})
    if student_of(request) is None:
        _give_id(response, new_student_id())
    return response


def _give_id(response: Response, sid: str) -> None:
    response.set_cookie(COOKIE_STUDENT, sid, max_age=COOKIE_AGE_S, path="/", httponly=True, samesite="lax")


@lru_cache(maxsize=4)
def _static(name: str) -> tuple[bytes, bytes, str]:
    path = PLOTLY_JS if name == "plotly.min.js" else STATIC / name
    body = path.read_bytes()
    kind = "text/javascript" if name.endswith(".js") else "text/css"
    return body, gzip.compress(body, 6), f"{kind}; charset=utf-8"


def static(request: Request) -> Response:
    name = request.path_params["name"]
    if name not in ("phone.js", "phone.css", "plotly.min.js"):
        return Response(status_code=404)
    body, packed, kind = _static(name)
    headers = {"Cache-Control": "public, max-age=86400", "Vary": "Accept-Encoding"}
    if "gzip" in request.headers.get("accept-encoding", ""):
        return Response(packed, media_type=kind, headers={**headers, "Content-Encoding": "gzip"})
    return Response(body, media_type=kind, headers=headers)


# ---- the API ---------------------------------------------------------------------------------------------------
def _code(request: Request) -> str | None:
    return clean_code(request.path_params.get("code"))


async def join(request: Request) -> Response:
    lang, code = lang_of(request), _code(request)
    if code is None:
        return refuse(400, "class.err.bad_code", lang)
    if await body_of(request) is None:
        return refuse(400, "class.err.bad_code", lang)
    sid = student_of(request) or new_student_id()
    try:
        await _run(lambda: store().join(code, sid, client=address_of(request)))
    except (ClassError, sqlalchemy.exc.SQLAlchemyError) as err:
        return store_error(err, lang, code)
    response = JSONResponse({"ok": True, "code": code})
    _give_id(response, sid)
    return response


async def state(request: Request) -> Response:
    """The class's view. With ``If-None-Match`` naming the current version and ``wait`` (seconds, at most
    :data:`MAX_WAIT_S`), the request is held until the view changes (a long poll: the phone sees the lecturer's
    Next within a fraction of a second, and an idle phone asks once every ``wait`` seconds)."""
    lang, code, sid = lang_of(request), _code(request), student_of(request)
    if code is None:
        return refuse(400, "class.err.bad_code", lang)
    if sid is None:
        return refuse(401, "class.err.unknown", lang, code, rejoin=True)
    try:
        wait = min(max(float(request.query_params.get("wait", 0)), 0.0), MAX_WAIT_S)
    except ValueError:
        wait = 0.0
    asked = request.headers.get("if-none-match")
    try:
        view = await _run(lambda: class_view(code, lang))
        if wait and asked == f'"{view["v"]}"':
            await changes(code).wait(version_in(view), wait)
            view = await _run(lambda: class_view(code, lang))
        tag = f'"{view["v"]}"'
        headers = {"ETag": tag, "Cache-Control": "private, no-cache"}
        note_seen(code, view["step_seq"], sid)  # this phone has the class's step (the lecturer's pacing line)
        if asked == tag:
            return Response(status_code=304, headers=headers)
        mine = await _run(lambda: my_part(code, sid, view, lang))
    except (ClassError, sqlalchemy.exc.SQLAlchemyError) as err:
        return store_error(err, lang, code)
    return JSONResponse({**view, "mine": mine}, headers=headers)


async def lecturer(request: Request) -> Response:
    """The lecturer's credential as an HttpOnly, SameSite=Strict cookie (``code:secret``), set here because no page
    script may write or read it: the lecturer's page posts the secret its session holds, the store checks it."""
    lang, code = lang_of(request), _code(request)
    if code is None:
        return refuse(400, "class.err.bad_code", lang)
    if not _lecturers.allow(address_of(request)):
        return refuse(429, "class.err.too_fast", lang)
    data = await body_of(request)
    secret = data.get("secret") if data else None
    if not isinstance(secret, str) or not 0 < len(secret) <= 200:
        return refuse(400, "class.err.not_lecturer_action", lang, code)
    try:
        await _run(lambda: store().check_lecturer(code, secret))
    except (ClassError, sqlalchemy.exc.SQLAlchemyError) as err:
        return store_error(err, lang, code)
    response = JSONResponse({"ok": True})
    response.set_cookie(COOKIE_LECTURER, f"{code}:{secret}", max_age=COOKIE_AGE_S, path="/", httponly=True,
                        samesite="strict")
    return response


async def answer(request: Request) -> Response:
    lang, code, sid = lang_of(request), _code(request), student_of(request)
    if code is None:
        return refuse(400, "class.err.bad_code", lang)
    if sid is None:
        return refuse(401, "class.err.unknown", lang, code, rejoin=True)
    if not _answers.allow(sid):
        return refuse(429, "class.err.too_fast", lang)
    data = await body_of(request)
    if data is None or not isinstance(data.get("question"), str):
        return JSONResponse({"error": "class.err.bad_input",
                             "message": html(t("class.err.bad_input", lang, error="JSON"))}, 400)
    try:
        await _run(lambda: store().answer(code, sid, data["question"], data.get("value")))
    except (ClassError, sqlalchemy.exc.SQLAlchemyError) as err:
        return store_error(err, lang, code)
    return JSONResponse({"ok": True})


def chart(request: Request) -> Response:
    """The revealed lesson step's chart (a chart is kept only for a revealed question)."""
    lang, code = lang_of(request), _code(request)
    question = request.path_params.get("question", "")
    if code is None or student_of(request) is None:
        return refuse(400, "class.err.bad_code", lang)
    try:
        found = figure(code, question)
    except (ClassError, sqlalchemy.exc.SQLAlchemyError) as err:
        return store_error(err, lang, code)
    if found is None:
        return Response(status_code=404)
    return Response(found, media_type="application/json", headers={"Cache-Control": "private, max-age=3600"})


async def _run(call):
    """A store call off the event loop (it blocks on the database, retrying while it is down)."""
    return await run_in_threadpool(call)


def routes() -> list[Route]:
    return [
        Route("/join", page), Route("/join/{code}", page), Route("/join/static/{name}", static),
        Route("/join/api/{code}/join", join, methods=["POST"]), Route("/join/api/{code}/state", state),
        Route("/join/api/{code}/answer", answer, methods=["POST"]),
        Route("/join/api/{code}/lecturer", lecturer, methods=["POST"]),
        Route("/join/api/{code}/figure/{question}", chart),
    ]

