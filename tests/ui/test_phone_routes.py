"""The students' phone page (ui/teaching/phone/, issue 34) through its HTTP routes, in process (Starlette's test
client against the very routes app.py mounts), with the class driven through the store as the lecturer's session
drives it. References: the store's own records (what was stored, counted, revealed) and the lesson's one grader."""

from __future__ import annotations

import json
import threading
import time

import pytest
from starlette.applications import Starlette
from starlette.testclient import TestClient

from teaching.classroom import ClassStore, StoreUnavailable
from teaching.lessons import by_id
from ui.strings.classroom import EN, ZH
from ui.teaching.class_mode import COOKIE_LECTURER, COOKIE_STUDENT, forget
from ui.teaching.phone import routes
from ui.teaching.phone.view import key_of

JSON = {"Content-Type": "application/json"}
LESSON = "numpy_decoder"


@pytest.fixture(scope="module")
def store():
    s = ClassStore()  # the tests' store (tests/conftest.py: a temporary EXPLORER_DATA_DIR), the routes' too
    yield s
    s.close()


@pytest.fixture(scope="module")
def app():
    return Starlette(routes=routes())


def phone(app, address: str = "10.0.0.1") -> TestClient:
    return TestClient(app, client=(address, 50000))


def _step(n: int) -> dict:
    return {"kind": "lesson", "lesson": LESSON, "step": n, "page": "attention", "question": f"{LESSON}:{n}"}


def _class(store, n: int = 1):
    code, secret = store.create_class()
    seq = store.set_step(code, secret, _step(n))
    return code, secret, seq


def _join(client, code: str, lang: str = "en"):
    r = client.post(f"/join/api/{code}/join?lang={lang}", headers=JSON, content="{}")
    assert r.status_code == 200, r.text
    return r


def _state(client, code: str, lang: str = "en", **headers):
    return client.get(f"/join/api/{code}/state?lang={lang}", headers=headers)


def test_join_sets_an_httponly_cookie_and_the_state_is_the_step_with_an_etag(app, store):
    code, _, seq = _class(store)
    client = phone(app)
    r = _join(client, code)
    cookie = r.headers["set-cookie"]
    assert cookie.startswith(f"{COOKIE_STUDENT}=") and "HttpOnly" in cookie and "SameSite=lax" in cookie
    step = by_id(LESSON).step(1)
    key = key_of(by_id(LESSON), step)
    for lang in ("en", "zh"):
        r = _state(client, code, lang)
        view = r.json()
        assert r.status_code == 200 and view["step_seq"] == seq and not view["revealed"]
        assert view["question"]["options"] == [o[lang] for o in key.options]  # the lesson key's options, in lang
        assert step.question.prompt[lang].split("Q·K")[0].strip()[:6] in view["question"]["prompt"]
        assert "answer" not in view and "explanation" not in view and "distribution" not in view  # nothing given away
        again = _state(client, code, lang, **{"If-None-Match": r.headers["etag"]})
        assert again.status_code == 304 and again.headers["etag"] == r.headers["etag"]
    assert _state(phone(app), code).status_code == 401  # no cookie: join first


def test_the_page_gives_a_phone_its_id_so_a_join_whose_answer_was_lost_is_the_same_student(app, store):
    code, _, _ = _class(store)
    client = phone(app)
    page = client.get(f"/join/{code}?lang=en")
    assert page.status_code == 200 and page.headers["set-cookie"].startswith(f"{COOKIE_STUDENT}=")
    assert "HttpOnly" in page.headers["set-cookie"] and "SameSite=lax" in page.headers["set-cookie"]
    sid = client.cookies[COOKIE_STUDENT]
    _join(client, code)  # joined; its answer lost (the phone left the page while it was on its way): the browser
    again = phone(app)  # has only the cookie the page gave it when it opens the page again and joins again
    again.cookies.set(COOKIE_STUDENT, sid)
    assert _join(again, code).headers["set-cookie"].startswith(f"{COOKIE_STUDENT}={sid};")
    assert store.counts(code, f"{LESSON}:1")["joined"] == 1  # one phone, one student
    assert "set-cookie" not in client.get(f"/join/{code}?lang=en").headers  # a phone keeps the id it has


def test_answers_are_stored_changed_and_refused_when_malformed(app, store):
    code, _, _ = _class(store)
    client = phone(app)
    _join(client, code)
    sid = client.cookies[COOKIE_STUDENT]
    q = f"{LESSON}:1"
    assert client.post(f"/join/api/{code}/answer", headers=JSON, content=json.dumps({"question": q, "value": 2})).json() == {"ok": True}
    assert store.my_answer(code, sid, q) == 2
    client.post(f"/join/api/{code}/answer", headers=JSON, content=json.dumps({"question": q, "value": 1}))
    assert store.my_answer(code, sid, q) == 1 and store.counts(code, q)["answered"] == 1  # changed, not added
    bad = [({"Content-Type": "text/plain"}, json.dumps({"question": q, "value": 0})),  # a cross-site form's type
           (JSON, "{not json"), (JSON, json.dumps({"value": 0})),
           (JSON, json.dumps({"question": q, "value": "x" * 5000})),  # over the body limit
           ({**JSON, "Origin": "http://evil.example"}, json.dumps({"question": q, "value": 0}))]
    for headers, body in bad:
        assert client.post(f"/join/api/{code}/answer", headers=headers, content=body).status_code == 400
    assert store.my_answer(code, sid, q) == 1
    proxied = {**JSON, "Origin": "https://testserver:8443"}  # a proxy changed the scheme and port, not the host
    assert client.post(f"/join/api/{code}/answer", headers=proxied,
                       content=json.dumps({"question": q, "value": 3})).status_code == 200
    assert store.my_answer(code, sid, q) == 3
    assert client.post(f"/join/api/{code}/answer", headers=JSON,
                       content=json.dumps({"question": "other:9", "value": 0})).json()["error"] == "class.err.closed"
    assert phone(app).post(f"/join/api/{code}/answer", headers=JSON,
                           content=json.dumps({"question": q, "value": 0})).status_code == 401
    for hostile in ("<script>", "A" * 300, "../../etc"):
        assert client.get(f"/join/api/{hostile}/state").status_code in (400, 404)


def test_the_reveal_gives_the_answer_graded_the_counts_and_the_chart(app, store):
    code, secret, _ = _class(store)
    q = f"{LESSON}:1"
    lesson = by_id(LESSON)
    key = key_of(lesson, lesson.step(1))
    picks = [key.correct, key.correct, (key.correct + 1) % len(key.options)]
    phones = [phone(app) for _ in picks]
    for client, value in zip(phones, picks):
        _join(client, code)
        client.post(f"/join/api/{code}/answer", headers=JSON, content=json.dumps({"question": q, "value": value}))
    quiet = phone(app)
    _join(quiet, code)  # joined, did not answer
    store.reveal(code, secret, q)
    forget(code)
    for client, value in zip(phones, picks):
        view = _state(client, code).json()
        assert view["revealed"] and view["answer"] == key.options[key.correct]["en"]
        assert view["mine"]["value"] == value and view["mine"]["right"] == key.grade(lesson.step(1).question, value)
        rows = {r["answer"]: r["students"] for r in view["distribution"]}
        assert sum(rows.values()) == 3 and rows[key.options[key.correct]["en"]] == 2  # the counts as given
        assert "3 of 4 answered" in view["sentence"] and not view["chart"]
    assert _state(quiet, code).json()["mine"] == {"value": None}
    assert quiet.get(f"/join/api/{code}/figure/{q}").status_code == 404  # not drawn yet
    store.put_figure(code, secret, q, json.dumps({"data": [{"type": "heatmap", "z": [[1]]}], "layout": {}}))
    time.sleep(1.1)  # the process's memory of "no chart yet" lasts a second
    forget(code)
    assert _state(quiet, code).json()["chart"]
    assert quiet.get(f"/join/api/{code}/figure/{q}").json()["data"][0]["type"] == "heatmap"
    # after the reveal the question is closed: a late answer is refused and said
    late = phones[2].post(f"/join/api/{code}/answer", headers=JSON, content=json.dumps({"question": q, "value": 0}))
    assert late.status_code == 409 and late.json()["error"] == "class.err.closed"


def test_a_revealed_question_stays_revealed_after_a_quick_poll(app, store):
    """Issue 32 on the phone page: a poll opened and closed after a reveal does not re-open the question."""
    code, secret, seq = _class(store)
    client = phone(app)
    _join(client, code)
    store.reveal(code, secret, f"{LESSON}:1")
    poll = {"kind": "poll", "question": "poll:3", "prompt": "Ready?", "options": ["yes", "no"], "page": "attention",
            "lesson": LESSON, "step": 1}
    seq = store.set_step(code, secret, poll, expect_seq=seq)
    forget(code)
    view = _state(client, code).json()
    assert view["question"]["id"] == "poll:3" and view["question"]["options"] == ["yes", "no"]
    store.set_step(code, secret, _step(1), expect_seq=seq)
    forget(code)
    view = _state(client, code).json()
    assert view["revealed"] and "answer" in view and view["question"]["id"] == f"{LESSON}:1"


def test_closed_joining_and_a_join_flood_are_refused_and_said(app, store):
    code, secret, _ = _class(store)
    store.set_joining(code, secret, False)
    r = phone(app).post(f"/join/api/{code}/join?lang=zh", headers=JSON, content="{}")
    assert r.status_code == 409 and ZH["class.err.joins_closed"].format(code=code) in r.json()["message"]
    store.set_joining(code, secret, True)
    flooder = "10.9.9.9"
    statuses = [phone(app, flooder).post(f"/join/api/{code}/join", headers=JSON, content="{}").status_code
                for _ in range(25)]
    assert statuses.count(200) == 20 and statuses[-1] == 429  # 20 a minute from one address
    _join(phone(app, "10.9.9.10"), code)  # another address still joins


def test_a_store_that_does_not_answer_is_a_503_to_retry_not_an_exit(app, store, monkeypatch):
    code, _, _ = _class(store)
    client = phone(app)
    _join(client, code)

    def down(*_args, **_kwargs):
        raise StoreUnavailable("not answering", since=time.time() - 12, waited_s=2.0)

    monkeypatch.setattr(ClassStore, "state", down)
    monkeypatch.setattr(ClassStore, "answer", down)
    forget(code)
    r = _state(client, code)
    assert r.status_code == 503 and r.json()["retry"] and EN["class.err.unavailable"].split("{")[0] in r.json()["message"]
    r = client.post(f"/join/api/{code}/answer", headers=JSON, content=json.dumps({"question": f"{LESSON}:1", "value": 0}))
    assert r.status_code == 503 and r.json()["retry"]
    monkeypatch.undo()
    forget(code)
    assert _state(client, code).status_code == 200  # back: the same student, still in the class


def test_a_held_poll_returns_when_the_lecturer_moves_on(app, store):
    code, secret, seq = _class(store)
    client = phone(app)
    _join(client, code)
    first = _state(client, code)
    got = {}

    def wait():
        got["r"] = client.get(f"/join/api/{code}/state?lang=en&wait=20", headers={"If-None-Match": first.headers["etag"]})

    waiter = threading.Thread(target=wait)
    waiter.start()
    time.sleep(0.5)
    store.set_step(code, secret, _step(2), expect_seq=seq)
    waiter.join(30)
    assert got["r"].status_code == 200 and got["r"].json()["question"]["id"] == f"{LESSON}:2"
    idle = client.get(f"/join/api/{code}/state?lang=en&wait=0.5", headers={"If-None-Match": got["r"].headers["etag"]})
    assert idle.status_code == 304  # nothing moved: the held poll ends with "not modified"


def test_the_lecturers_cookie_is_set_httponly_only_for_the_right_secret(app, store):
    code, secret, _ = _class(store)
    client = phone(app)
    wrong = client.post(f"/join/api/{code}/lecturer", headers=JSON, content=json.dumps({"secret": "guess"}))
    assert wrong.status_code == 409 and "set-cookie" not in wrong.headers
    right = client.post(f"/join/api/{code}/lecturer", headers=JSON, content=json.dumps({"secret": secret}))
    cookie = right.headers["set-cookie"]
    assert right.status_code == 200 and cookie.startswith(f"{COOKIE_LECTURER}={code}:")
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie


def test_the_page_and_its_scripts_are_served_from_here_in_both_languages(app):
    client = phone(app)
    for lang, title in (("en", "Class"), ("zh", "课堂")):
        page = client.get(f"/join/ABCDEF?lang={lang}")
        assert page.status_code == 200 and title in page.text
        assert "http://" not in page.text and "https://" not in page.text  # offline: nothing from another host
    assert client.get("/join", headers={"Accept-Language": "zh-CN,zh;q=0.9"}).text.count('lang="zh-CN"') == 1
    packed = client.get("/join/static/plotly.min.js", headers={"Accept-Encoding": "gzip"})
    assert packed.status_code == 200 and packed.headers["content-encoding"] == "gzip"
    assert client.get("/join/static/../../app.py").status_code == 404
    assert client.get("/join/static/other.js").status_code == 404


def test_phones_that_have_the_step_are_counted_for_the_lecturers_pacing_line(app, store):
    code, secret, seq = _class(store)
    with phone(app) as first, phone(app) as second:  # open clients: their event loop runs the batched write
        for client in (first, second):
            _join(client, code)
            _state(client, code)
        deadline = time.monotonic() + 30
        while store.counts(code, f"{LESSON}:1")["on_step"] < 2 and time.monotonic() < deadline:
            time.sleep(0.2)
        assert store.counts(code, f"{LESSON}:1")["on_step"] == 2
        store.set_step(code, secret, _step(2), expect_seq=seq)
        forget(code)
        assert store.counts(code, f"{LESSON}:2")["on_step"] == 0  # nobody has the new step yet
        _state(first, code)
        deadline = time.monotonic() + 30
        while store.counts(code, f"{LESSON}:2")["on_step"] < 1 and time.monotonic() < deadline:
            time.sleep(0.2)
        assert store.counts(code, f"{LESSON}:2")["on_step"] == 1
