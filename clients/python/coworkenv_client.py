"""A small client for `coworkenv serve` (docs/serve.md), using only the standard library.

Copy this file next to your code, or put its folder on PYTHONPATH; it needs Python 3.8 or later
and nothing else.

    from coworkenv_client import Client, CoworkenvError

    client = Client("http://127.0.0.1:8080")
    with client.create("consult-vat-reverse-charge", seed=1) as session:
        print(session.system)          # the system prompt a model would get
        print(session.user)            # the first user message
        content = session.call("fs_list", path="/finance")   # the tool message's content
        step = session.reply("Where is the customer established?")
        if step.done:
            print(step.reward, step.result["score"])

A call returns the tool message a model would see, as the server gives it: a tool's error (wrong
arguments, an injected fault) is content too (`session.last.is_error` says so), not an exception.
Errors of the API itself (an unknown task or tool, a session that is over, a bad token...) raise
CoworkenvError with the server's code, message and HTTP status.
"""

import json
import os
import socket
import urllib.error
import urllib.parse
import urllib.request

__all__ = ["Client", "Session", "Step", "CoworkenvError", "TOKEN_ENV"]

# The environment variable the server (and, when no token is given, this client) reads the
# bearer token from.
TOKEN_ENV = "COWORKENV_SERVE_TOKEN"


class CoworkenvError(Exception):
    """An error answer of the server, {"error": {"code", "message"}}, or a failure to reach it.

    code is the server's stable error code (docs/serve.md, "Errors"): bad_json, bad_request,
    unauthorized, unknown_task, unknown_session, unknown_tool, not_found, method_not_allowed,
    session_busy, episode_over, body_too_large, setup_failed, too_many_sessions, shutting_down,
    internal. Two codes are this client's own: "unreachable" (no answer: connection refused, a
    timeout; status is None) and "bad_response" (an answer that is not the JSON the API sends).
    """

    def __init__(self, code, message, status=None):
        super().__init__("%s: %s" % (code, message) if status is None else "%s (%d): %s" % (code, status, message))
        self.code = code
        self.message = message
        self.status = status


class Step:
    """What an action gave back (POST /sessions/{id}/call or /reply), as its fields.

    content, call_id, is_error: a call's tool message, the id it ran under, and whether the
    content is an error (the model sees it all the same). user: the next user message (a simulated
    user's answer within the turn, or the opening of the next turn), None when there is none.
    turn: the turn the episode is in now (0-based). turn_over: the action ended a turn; reward is
    then the turn's score from its verifier (None for a turn without one). done: the episode is
    over; result is then its verdict (score, passed, checks, rewards, ...). raw is the answer as
    JSON decoded.
    """

    __slots__ = ("raw", "content", "call_id", "is_error", "user", "turn", "turn_over", "reward", "done", "result")

    def __init__(self, raw):
        self.raw = raw
        self.content = raw.get("content")
        self.call_id = raw.get("call_id")
        self.is_error = bool(raw.get("is_error", False))
        self.user = raw.get("user") or None
        self.turn = raw.get("turn", 0)
        self.turn_over = bool(raw.get("turn_over", False))
        self.reward = raw.get("reward")
        self.done = bool(raw.get("done", False))
        self.result = raw.get("result")

    @property
    def score(self):
        """The episode's score when it is over, else None."""
        return self.result.get("score") if self.result else None

    def __repr__(self):
        fields = ("%s=%r" % (k, getattr(self, k)) for k in self.__slots__[1:] if getattr(self, k) not in (None, False))
        return "Step(%s)" % ", ".join(fields)


class Client:
    """A `coworkenv serve` server at base_url ("http://127.0.0.1:8080").

    token is the bearer token; None reads COWORKENV_SERVE_TOKEN (no token when it is unset too).
    timeout bounds each request in seconds: an action runs the task's scripts, which the task's
    limits bound, so the default leaves them room.
    """

    def __init__(self, base_url, token=None, timeout=120.0):
        if "://" not in base_url:
            base_url = "http://" + base_url
        self.base_url = base_url.rstrip("/")
        self.token = token if token is not None else os.environ.get(TOKEN_ENV) or None
        self.timeout = timeout

    def __repr__(self):
        return "Client(%r)" % self.base_url

    # The API.

    def health(self):
        """GET /health: {"status": "healthy", "sessions", "max_sessions", "tasks"}."""
        return self.request("GET", "/health")

    def tasks(self):
        """GET /tasks: the served tasks, each {"name", "file", "description", "capabilities",
        "turns", "simulated_user", "tools"}."""
        return self.request("GET", "/tasks")["tasks"]

    def create(self, task, seed=0):
        """POST /sessions: starts an episode of the task and returns its Session.

        seed is the run seed (mixed with the task's, as `run --seed` does; 0 keeps the task's).
        Raises CoworkenvError unknown_task, setup_failed, too_many_sessions...
        """
        return Session(self, self.request("POST", "/sessions", {"task": task, "seed": seed}))

    def session(self, id):
        """The Session of an existing session id (GET /sessions/{id}), to go on with it. Its
        system and user come from the messages; its tools are unknown (empty): GET does not
        give them."""
        state = self.request("GET", "/sessions/" + _quote(id))
        return Session(self, dict(state, id=id), attached=True)

    def request(self, method, path, body=None):
        """Sends one request and returns the JSON answer; an error answer raises CoworkenvError."""
        data = None
        headers = {"Accept": "application/json"}
        if body is not None:
            data = json.dumps(body).encode("utf-8")
            headers["Content-Type"] = "application/json"
        if self.token:
            headers["Authorization"] = "Bearer " + self.token
        req = urllib.request.Request(self.base_url + path, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                status, payload = resp.status, resp.read()
        except urllib.error.HTTPError as e:
            status, payload = e.code, e.read()
            e.close()
        except urllib.error.URLError as e:
            raise CoworkenvError("unreachable", "%s %s: %s" % (method, self.base_url + path, e.reason)) from None
        except (socket.timeout, TimeoutError, ConnectionError) as e:
            raise CoworkenvError("unreachable", "%s %s: %s" % (method, self.base_url + path, e)) from None
        try:
            answer = json.loads(payload.decode("utf-8"))
        except ValueError:
            raise CoworkenvError("bad_response", "%s %s: the answer is not JSON: %.200r" % (method, path, payload), status) from None
        if status >= 400:
            err = answer.get("error") if isinstance(answer, dict) else None
            if isinstance(err, dict) and "code" in err:
                raise CoworkenvError(err["code"], err.get("message", ""), status)
            raise CoworkenvError("bad_response", "%s %s: status %d: %.200r" % (method, path, status, payload), status)
        if not isinstance(answer, dict):
            raise CoworkenvError("bad_response", "%s %s: the answer is not a JSON object" % (method, path), status)
        return answer


class Session:
    """One live episode on the server.

    From its creation: id, task, seed, system (the system prompt), tools (chat-completions
    function schemas, in the task's order), messages (the conversation so far, system message
    first), turns, trace. Kept up to date by each action: user (the latest user message), turn,
    done, result, and last (the last Step). created is the creation answer as JSON decoded.

    Use it as a context manager to delete it on the way out: a finished session is kept on the
    server, and counts towards --max-sessions, until it is deleted.
    """

    def __init__(self, client, created, attached=False):
        self.client = client
        self.created = created
        self.id = created["id"]
        self.task = created.get("task")
        self.seed = created.get("seed", 0)
        self.system = created.get("system")
        self.tools = created.get("tools") or []
        self.messages = created.get("messages") or []
        self.turns = created.get("turns", 1)
        self.trace = created.get("trace")
        self.turn = created.get("turn", 0)
        self.done = bool(created.get("done", False))
        self.result = created.get("result")
        self.user = created.get("user")
        self.last = Step(created["last"]) if attached and "last" in created else None
        if attached:
            msgs = [m for m in self.messages if isinstance(m, dict)]
            if msgs and msgs[0].get("role") == "system":
                self.system = msgs[0].get("content")
            users = [m.get("content") for m in msgs if m.get("role") == "user"]
            if users:
                self.user = users[-1]
        self.closed = False

    def __repr__(self):
        return "Session(%r, task=%r, turn=%d/%d, done=%r)" % (self.id, self.task, self.turn, self.turns, self.done)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        try:
            self.close()
        except CoworkenvError:
            if exc[0] is None:
                raise
        return False

    @property
    def tool_names(self):
        """The names of the session's tools, in order."""
        return [t["function"]["name"] for t in self.tools]

    @property
    def reward(self):
        """The episode's score once it is over (result["score"]), else None."""
        return self.result.get("score") if self.result else None

    def call(self, name, arguments=None, /, **kwargs):
        """Calls a tool and returns its content: the tool message a model would get.

        The arguments are keywords (session.call("fs_read", path="/a")), or one dict, or their JSON
        text as a model sent it (session.call("fs_read", '{"path": "/a"}')). A tool's error is
        content too (self.last.is_error). A call can end the turn (past max_calls_per_turn): see
        self.last. Raises CoworkenvError unknown_tool (nothing ran), episode_over, session_busy...
        """
        if arguments is None:
            arguments = kwargs
        elif kwargs:
            raise TypeError("give the arguments as one dict (or JSON text) or as keywords, not both")
        content = self.call_step(name, arguments).content
        return "" if content is None else content

    def call_step(self, name, arguments=None, call_id=None, /):
        """As call, with the arguments as one dict (or JSON text), but returns the whole Step.
        call_id names the call (the server assigns one when it is None or already used)."""
        body = {"name": name, "arguments": {} if arguments is None else arguments}
        if call_id is not None:
            body["id"] = call_id
        return self._act("/call", body)

    def reply(self, content):
        """Sends a message: the turn's reply, or in a turn whose user is simulated a message to
        the user, who may answer (step.user, the turn goes on). Returns the Step: when the turn
        is over, step.reward; then step.user is the next turn's message, or step.done and
        step.result end the episode."""
        return self._act("/reply", {"content": content})

    def state(self):
        """GET /sessions/{id}: task, turn, turns, done, calls, last, messages, result, trace."""
        st = self.client.request("GET", "/sessions/" + _quote(self.id))
        self._update(st)
        return st

    def close(self):
        """DELETE /sessions/{id}: ends the session (an unfinished episode ends with the error
        interrupted) and returns its last state. Closing again returns None."""
        if self.closed:
            return None
        st = self.client.request("DELETE", "/sessions/" + _quote(self.id))
        self.closed = True
        self._update(st)
        return st

    def _act(self, path, body):
        step = Step(self.client.request("POST", "/sessions/" + _quote(self.id) + path, body))
        self.last = step
        self.turn = step.turn
        if step.user:
            self.user = step.user
        if step.done:
            self.done = True
            self.result = step.result
        return step

    def _update(self, st):
        self.turn = st.get("turn", self.turn)
        self.done = bool(st.get("done", self.done))
        if st.get("result") is not None:
            self.result = st["result"]
        if st.get("messages") is not None:
            self.messages = st["messages"]


def _quote(id):
    return urllib.parse.quote(str(id), safe="")
