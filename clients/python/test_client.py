"""Tests of coworkenv_client against a running `coworkenv serve` (standard library only).

The Go test TestPythonClient (cmd/coworkenv/python_client_test.go) builds the binary, starts the
server with a token and runs these with:

    COWORKENV_URL      the server's address
    COWORKENV_ORACLE   a JSON file: what the oracle did in some built-in tasks, and its verdicts
    COWORKENV_SERVE_TOKEN  the server's token (the client reads it when given none)

Run by hand: `go test ./cmd/coworkenv/ -run Python -v`. Without COWORKENV_URL the tests that need
a server are skipped.
"""

import json
import os
import unittest

from coworkenv_client import Client, CoworkenvError, Session, Step

URL = os.environ.get("COWORKENV_URL")
ORACLE = os.environ.get("COWORKENV_ORACLE")
NEEDS_SERVER = "set COWORKENV_URL and COWORKENV_ORACLE (the Go test TestPythonClient does) to run against a server"


def oracle_tasks():
    """The oracle's tasks from COWORKENV_ORACLE, by name."""
    with open(ORACLE) as f:
        return {t["task"]: t for t in json.load(f)["tasks"]}


def without_rewards(result):
    """A result without its per-turn rewards: the trace's end event."""
    return {k: v for k, v in result.items() if k != "rewards"}


@unittest.skipUnless(URL and ORACLE, NEEDS_SERVER)
class ClientTest(unittest.TestCase):
    def setUp(self):
        self.client = Client(URL)
        self.oracle = oracle_tasks()

    def test_health_and_tasks(self):
        health = self.client.health()
        self.assertEqual("healthy", health["status"])
        self.assertGreater(health["tasks"], 0)
        tasks = {t["name"]: t for t in self.client.tasks()}
        self.assertEqual(health["tasks"], len(tasks))
        for name, o in self.oracle.items():
            self.assertEqual(o["turns"], tasks[name]["turns"], name)
            self.assertEqual(o["simulated_user"], tasks[name]["simulated_user"], name)
            self.assertEqual(o["tools"], tasks[name]["tools"], name)

    def test_oracle(self):
        """Each task driven with exactly the oracle's calls and messages: the same tool contents,
        each turn's reward and the verdict are the oracle's."""
        for name, o in self.oracle.items():
            with self.subTest(task=name):
                self.play(o)

    def play(self, o):
        with self.client.create(o["task"], o["seed"]) as s:
            self.assertIsInstance(s, Session)
            self.assertEqual(o["task"], s.task)
            self.assertEqual(o["user"], s.user)
            self.assertEqual(o["turns"], s.turns)
            self.assertEqual(o["tools"], s.tool_names)
            self.assertEqual([{"role": "system", "content": s.system}, {"role": "user", "content": s.user}], s.messages)
            self.assertFalse(s.done)
            self.assertTrue(s.trace and s.trace.endswith(s.id + ".jsonl"), s.trace)
            questions = 0
            step = None
            for i, turn in enumerate(o["acts"]):
                for k, act in enumerate(turn):
                    end = k == len(turn) - 1
                    if "call" in act:
                        # keywords one time, a dict the next: both are the arguments
                        if k % 2:
                            content = s.call(act["call"], **act["arguments"])
                        else:
                            content = s.call(act["call"], act["arguments"])
                        step = s.last
                        self.assertIsInstance(step, Step)
                        self.assertEqual(content, step.content)
                        if "content" in act:
                            self.assertEqual(act["content"], content, "call %s" % act["call"])
                            self.assertFalse(step.is_error, content)
                        self.assertFalse(step.turn_over)
                        continue
                    step = s.reply(act["reply"])
                    self.assertEqual(end, step.turn_over, "turn %d act %d: %r" % (i, k, step))
                    if end:
                        self.assertEqual(o["turn_rewards"][i], step.reward, "turn %d's reward" % i)
                        if i < len(o["acts"]) - 1:
                            self.assertFalse(step.done)
                            self.assertEqual(i + 1, step.turn)
                            self.assertTrue(step.user)
                            self.assertEqual(step.user, s.user)
                    else:
                        questions += 1  # a question to the simulated user, who answers
                        self.assertEqual(i, step.turn)
                        self.assertTrue(step.user)
            if o["simulated_user"]:
                self.assertGreater(questions, 0, "the oracle asks the simulated user")
            self.assertTrue(step.done)
            self.assertTrue(s.done)
            self.assertEqual(o["end"], without_rewards(step.result))
            self.assertEqual(o["end"]["score"], step.score)
            self.assertEqual(o["end"]["score"], s.reward)
            self.assertTrue(step.result["passed"])
            self.assertEqual(o["turn_rewards"], step.result["rewards"])

            st = s.state()
            self.assertTrue(st["done"])
            self.assertEqual(o["calls"], st["calls"])
            self.assertEqual(step.result, st["result"])
            self.assertNotIn("trace_error", st)

            with self.assertRaises(CoworkenvError) as cm:
                s.reply("anything else?")
            self.assertEqual("episode_over", cm.exception.code)
            self.assertEqual(409, cm.exception.status)
        self.assertTrue(s.closed)
        with self.assertRaises(CoworkenvError) as cm:
            s.state()
        self.assertEqual("unknown_session", cm.exception.code)

    def test_errors(self):
        with self.assertRaises(CoworkenvError) as cm:
            self.client.create("no-such-task")
        self.assertEqual(("unknown_task", 404), (cm.exception.code, cm.exception.status))
        self.assertIn("no-such-task", cm.exception.message)
        self.assertIn("unknown_task", str(cm.exception))

        with self.assertRaises(CoworkenvError) as cm:
            self.client.create("")
        self.assertEqual(("bad_request", 400), (cm.exception.code, cm.exception.status))

        name = next(iter(self.oracle))
        with self.client.create(name) as s:
            with self.assertRaises(CoworkenvError) as cm:
                s.call("no_such_tool", path="/")
            self.assertEqual(("unknown_tool", 404), (cm.exception.code, cm.exception.status))
            self.assertEqual(0, s.state()["calls"], "nothing ran")

            # a tool's error is content, as a model would see it, not an exception
            tool = s.tool_names[0]
            content = s.call("fs_read", path=7) if "fs_read" in s.tool_names else s.call(tool, "[1]")
            self.assertTrue(s.last.is_error)
            self.assertTrue(content.startswith('{"error":'), content)
            # arguments as JSON text, as a model sends them
            if "fs_list" in s.tool_names:
                content = s.call_step("fs_list", '{"path": "/"}', "my-call")
                self.assertEqual("my-call", content.call_id)
                self.assertFalse(content.is_error, content.content)
            with self.assertRaises(TypeError):
                s.call(tool, {"path": "/"}, path="/")

            # another client takes the session up by its id
            again = self.client.session(s.id)
            self.assertEqual(s.id, again.id)
            self.assertEqual(s.task, again.task)
            self.assertFalse(again.done)
            self.assertEqual(s.last.call_id, again.last.call_id)
            self.assertEqual((s.system, s.user), (again.system, again.user))

            state = s.close()
            self.assertEqual("interrupted", state["result"]["error"]["code"])
            self.assertIsNone(s.close(), "closing again does nothing")
        with self.assertRaises(CoworkenvError) as cm:
            again.reply("hello?")
        self.assertEqual("unknown_session", cm.exception.code)

    def test_left_open(self):
        """A session left open on purpose, with a call made: the Go test sees it on the server,
        and sees Ctrl-C close it (its trace ends with the error interrupted). Every other test
        deletes its sessions."""
        name = next(iter(self.oracle))
        s = self.client.create(name, 1)
        s.call(s.tool_names[0], {})
        self.assertEqual(1, s.state()["calls"])
        self.assertFalse(s.done)

    def test_token(self):
        for token in ("", "wrong"):
            c = Client(URL, token=token)
            with self.assertRaises(CoworkenvError) as cm:
                c.tasks()
            self.assertEqual(("unauthorized", 401), (cm.exception.code, cm.exception.status))
            self.assertEqual("healthy", c.health()["status"], "GET /health needs no token")

    def test_unreachable(self):
        c = Client("127.0.0.1:1", timeout=5)
        with self.assertRaises(CoworkenvError) as cm:
            c.health()
        self.assertEqual("unreachable", cm.exception.code)
        self.assertIsNone(cm.exception.status)


class OfflineTest(unittest.TestCase):
    """What needs no server."""

    def test_base_url(self):
        self.assertEqual("http://127.0.0.1:8080", Client("127.0.0.1:8080/", token="").base_url)
        self.assertEqual("https://x.example/api", Client("https://x.example/api", token="").base_url)

    def test_token_from_environment(self):
        old = os.environ.get("COWORKENV_SERVE_TOKEN")
        os.environ["COWORKENV_SERVE_TOKEN"] = "from-env"
        try:
            self.assertEqual("from-env", Client("h:1").token)
            self.assertEqual("given", Client("h:1", token="given").token)
            self.assertFalse(Client("h:1", token="").token)
        finally:
            if old is None:
                del os.environ["COWORKENV_SERVE_TOKEN"]
            else:
                os.environ["COWORKENV_SERVE_TOKEN"] = old

    def test_step(self):
        st = Step({"turn": 1, "turn_over": True, "reward": 0.5, "done": True, "result": {"score": 0.75}})
        self.assertEqual((1, True, 0.5, True, 0.75), (st.turn, st.turn_over, st.reward, st.done, st.score))
        self.assertIsNone(st.user)
        self.assertIn("reward=0.5", repr(st))


if __name__ == "__main__":
    unittest.main()
