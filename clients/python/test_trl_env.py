"""Tests of the TRL adapter (trl_env), standard library only: TRL cannot be installed here.

StandInTrainer does with an environment factory what GRPOTrainer does, as trl_env's docstring
lists it with its sources: it probes an instance for its tool methods, derives their schemas the
way transformers' get_json_schema does, resets an instance per rollout with the dataset row,
runs the model's tool calls as method(**arguments) (an exception becomes {"error": ...}), and
calls the reward function with the completions and the environments. The "model" is the
oracle's actions (from COWORKENV_ORACLE, see test_client.py).
"""

import inspect
import json
import os
import re
import typing
import unittest

import trl_env
from coworkenv_client import Client, CoworkenvError
from test_client import NEEDS_SERVER, ORACLE, URL, oracle_tasks, without_rewards

# What get_json_schema gives for a type hint (transformers, utils/chat_template_utils.py).
_TYPES = {str: "string", int: "integer", float: "number", bool: "boolean"}


def json_type(hint):
    """The schema get_json_schema derives from a type hint."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if hint is typing.Any:
        return {}
    if origin is typing.Union:
        subs = [json_type(a) for a in args if a is not type(None)]
        out = subs[0] if len(subs) == 1 else (
            {"type": sorted(s["type"] for s in subs)} if all(isinstance(s.get("type"), str) for s in subs) else {"anyOf": subs})
        if type(None) in args:
            out = dict(out, nullable=True)
        return out
    if origin is list or hint is list:
        return {"type": "array", "items": json_type(args[0])} if args else {"type": "array"}
    if hint in _TYPES:
        return {"type": _TYPES[hint]}
    return {"type": "object"}


def parse_docstring(doc):
    """A Google-style docstring's description and its "Args:" lines, as get_json_schema reads
    them: the description ends at the first Args:/Returns:/Raises:, an argument's line is
    "name: text" and goes on to the next such line."""
    m = re.search(r"(Args:|Returns:|Raises:)", doc)
    description = (doc[: m.start()] if m else doc).strip()
    args = {}
    a = re.search(r"\n\s*Args:\n(.*?)(?:\n\s*(?:Returns:|Raises:)|\Z)", doc, re.S)
    if a:
        name = None
        for line in a.group(1).split("\n"):
            m = re.match(r"\s*(\w+):\s*(.*)$", line)
            if m:
                name = m.group(1)
                args[name] = m.group(2).strip()
            elif name and line.strip():
                args[name] += " " + line.strip()
    return description, args


def schema_of(method):
    """The tool schema TRL shows the model for a method: transformers' get_json_schema's rules
    (a docstring; a type hint on every argument; an "Args:" line for every argument; required:
    the arguments without a default; an enum from "(choices: [...])" at the end of the line)."""
    doc = inspect.getdoc(method)
    if not doc:
        raise AssertionError("%s has no docstring" % method.__name__)
    sig = inspect.signature(method)
    required = []
    for name, p in sig.parameters.items():
        if p.annotation is inspect.Parameter.empty:
            raise AssertionError("%s: argument %s has no type hint" % (method.__name__, name))
        if p.default is inspect.Parameter.empty:
            required.append(name)
    description, docs = parse_docstring(doc)
    props = {}
    for name, hint in typing.get_type_hints(method).items():
        if name == "return":
            continue
        if name not in docs:
            raise AssertionError("%s: no description of argument %s" % (method.__name__, name))
        s = json_type(hint)
        desc = docs[name]
        m = re.search(r"\(choices:\s*(.*?)\)\s*$", desc)
        if m:
            s["enum"] = [c.strip() for c in json.loads(m.group(1))]
            desc = desc[: m.start()].strip()
        s["description"] = desc
        props[name] = s
    params = {"type": "object", "properties": props}
    if required:
        params["required"] = required
    return {"name": method.__name__, "description": description, "parameters": params}


def one_line(text):
    return " ".join(text.split())


class StandInTrainer:
    """GRPOTrainer's side of environment_factory (see trl_env's docstring, points 1-6)."""

    def __init__(self, environment_factory, reward_funcs):
        self.multi = isinstance(environment_factory, dict)
        self.factories = environment_factory if self.multi else {None: environment_factory}
        self.reward_funcs = reward_funcs
        self.tools, self.pool = {}, {}
        for name, factory in self.factories.items():
            probe = factory()  # no arguments
            members = dict(inspect.getmembers(probe, predicate=inspect.ismethod))
            assert "reset" in members, "an environment needs reset"
            self.tools[name] = [m for n, m in members.items() if n not in ("reset", "get_reward") and not n.startswith("_")]
            self.pool[name] = [probe]
        self.schemas = {name: [schema_of(m) for m in methods] for name, methods in self.tools.items()}

    def step(self, rows, policies):
        """One batch: a rollout per row, each played by its policy, a function (observation,
        tools) that yields completion messages: assistant messages with tool calls, the final
        answer last. Returns the completions and each reward function's rewards."""
        names = [row.get("environment") if self.multi else None for row in rows]
        envs, cursor = [], {}
        for name in names:
            pool, i = self.pool[name], cursor.get(name, 0)
            if i == len(pool):
                pool.append(self.factories[name]())
            cursor[name] = i + 1
            envs.append(pool[i])
        completions, prompts = [], []
        for row, name, env, policy in zip(rows, names, envs, policies):
            kwargs = {k: v for k, v in row.items() if k != "environment"} if self.multi else row
            prompt = [dict(m) for m in row.get("prompt", [{"role": "user", "content": ""}])]
            observation = env.reset(**kwargs)
            if observation is not None:
                prompt[-1]["content"] += observation
            prompts.append(prompt)
            tools = {m.__name__: m for n, m in inspect.getmembers(env, predicate=inspect.ismethod)
                     if n not in ("reset", "get_reward") and not n.startswith("_")}
            completion = []
            for message in policy(prompt[-1]["content"], tools):
                completion.append(message)
                for call in message.get("tool_calls") or []:
                    f = call["function"]
                    try:
                        if f["name"] not in tools:
                            raise ValueError("Tool %s not found." % f["name"])
                        result = tools[f["name"]](**f["arguments"])
                    except Exception as e:
                        result = {"error": str(e)}
                    completion.append({"role": "tool", "name": f["name"], "content": str(result)})
            completions.append(completion)
        extra = {k: [row.get(k) for row in rows] for k in rows[0] if k not in ("prompt", "completion", "completion_ids")}
        rewards = [f(prompts=prompts, completions=completions, environments=envs, trainer_state=None, **extra)
                   for f in self.reward_funcs]
        return completions, rewards, envs


def call(name, arguments):
    return {"role": "assistant", "content": "", "tool_calls": [{"type": "function", "function": {"name": name, "arguments": arguments}}]}


def oracle_policy(o, test, user_tool="message_user"):
    """The oracle's actions as a model's completion: its calls as tool calls, its messages before
    the last through the user tool, and its last message as the final answer."""
    acts = [a for turn in o["acts"] for a in turn]

    def policy(observation, tools):
        test.assertIn(o["user"], observation)
        for k, act in enumerate(acts):
            if "call" in act:
                yield call(act["call"], act["arguments"])
            elif k < len(acts) - 1:
                yield call(user_tool, {"message": act["reply"]})
            else:
                yield {"role": "assistant", "content": act["reply"]}

    return policy


@unittest.skipUnless(URL and ORACLE, NEEDS_SERVER)
class TRLAdapterTest(unittest.TestCase):
    def setUp(self):
        self.oracle = oracle_tasks()
        self.client = Client(URL)

    def test_oracle_rollouts(self):
        """Each task as an environment of its own: its tools are the methods, with the session's
        schemas; the oracle's rollout gets the oracle's score as its reward."""
        for name, o in self.oracle.items():
            with self.subTest(task=name):
                Env = trl_env.environment_factory(URL, name, seed=o["seed"])
                trainer = StandInTrainer(Env, [trl_env.reward_func])
                multi = o["turns"] > 1 or o["simulated_user"]
                want_tools = o["tools"] + (["message_user"] if multi else [])
                self.assertEqual(sorted(want_tools), sorted(m.__name__ for m in trainer.tools[None]))
                self.check_schemas(name, trainer.schemas[None])

                rows = trl_env.dataset_rows([name], seeds=[o["seed"]])
                completions, rewards, envs = trainer.step(rows, [oracle_policy(o, self)])
                env = envs[0]
                self.assertEqual([o["end"]["score"]], rewards[0])
                self.assertEqual(o["end"]["score"], env.reward)
                self.assertEqual(o["end"], without_rewards(env.result))
                self.assertEqual(o["turn_rewards"], env.result["rewards"])
                self.assertEqual(o["turn_rewards"], env.turn_rewards)
                self.assertTrue(env.done)
                self.assertIsNone(env.session, "the session is deleted")
                tool_messages = [m for m in completions[0] if m["role"] == "tool"]
                self.assertFalse([m for m in tool_messages if m["content"].startswith("{'error'")],
                                 "no tool raised")
                if multi:
                    said = [m["content"] for m in tool_messages if m["name"] == "message_user"]
                    self.assertTrue(said and all(said), "the user answers each message")
                # a second reward function finds the same score: finishing is done once
                self.assertEqual(o["end"]["score"], trl_env.reward_func([[]], [env])[0])

    def check_schemas(self, task, schemas):
        """The schemas TRL would build from the methods say what the session's schemas say."""
        with self.client.create(task) as s:
            want = {t["function"]["name"]: t["function"] for t in s.tools}
        for got in schemas:
            if got["name"] == "message_user":
                self.assertEqual(["message"], got["parameters"]["required"])
                continue
            w = want[got["name"]]
            msg = "%s.%s" % (task, got["name"])
            self.assertEqual(one_line(w["description"]), got["description"], msg)
            wp, gp = w["parameters"], got["parameters"]
            self.assertEqual(sorted(wp.get("required", [])), sorted(gp.get("required", [])), msg)
            self.assertEqual(list(wp.get("properties", {})), list(gp["properties"]), msg)
            for pname, ws in wp.get("properties", {}).items():
                gs = gp["properties"][pname]
                pmsg = "%s(%s): %s" % (msg, pname, gs)
                if "type" in ws:
                    self.assertEqual(ws["type"], gs["type"], pmsg)
                    if ws["type"] == "array":
                        self.assertEqual(ws["items"], gs["items"], pmsg)
                else:  # anyOf of string and list of strings
                    self.assertEqual(sorted(x["type"] for x in ws["anyOf"]), gs["type"], pmsg)
                self.assertEqual(ws.get("enum"), gs.get("enum"), pmsg)
                self.assertTrue(gs["description"].startswith(one_line(ws.get("description", ""))), pmsg)
                if "default" in ws:
                    self.assertIn("Defaults to %s." % json.dumps(ws["default"], ensure_ascii=False), gs["description"], pmsg)

    def test_environments_by_row(self):
        """The dict form: one environment per task, the row's `environment` picks it, and a batch
        with two rollouts of one environment draws two instances from its pool."""
        names = list(self.oracle)[:2]
        factories = trl_env.environment_factories(URL, names)
        trainer = StandInTrainer(factories, [trl_env.reward_func])
        for name in names:
            self.assertIn(name, [t for t in factories])
            self.assertEqual("Coworkenv_" + name.replace("-", "_"), factories[name].__name__)
        rows = []
        for name in names:
            rows += trl_env.dataset_rows([name], seeds=[self.oracle[name]["seed"]] * 2, environment=True)
        policies = [oracle_policy(self.oracle[row["task"]], self) for row in rows]
        _, rewards, envs = trainer.step(rows, policies)
        self.assertEqual([self.oracle[row["task"]]["end"]["score"] for row in rows], rewards[0])
        self.assertEqual(len(rows), len({id(e) for e in envs}), "one instance per rollout")
        # the pool is reused: the next batch resets the same instances
        _, rewards, envs2 = trainer.step(rows, [oracle_policy(self.oracle[row["task"]], self) for row in rows])
        self.assertEqual([id(e) for e in envs], [id(e) for e in envs2])
        self.assertEqual([self.oracle[row["task"]]["end"]["score"] for row in rows], rewards[0])

    def test_stopped_early(self):
        """A multi-turn task whose model answers the first turn and stops: the reply ends the turn,
        the episode is closed unfinished (interrupted), and the reward is its score then."""
        name = next(n for n, o in self.oracle.items() if o["turns"] > 1)
        o = self.oracle[name]
        Env = trl_env.environment_factory(URL, name)
        trainer = StandInTrainer(Env, [trl_env.reward_func])
        first = o["acts"][0]

        def policy(observation, tools):
            for act in first:
                if "call" in act:
                    yield call(act["call"], act["arguments"])
            yield {"role": "assistant", "content": first[-1]["reply"]}

        _, rewards, envs = trainer.step(trl_env.dataset_rows([name], seeds=[o["seed"]]), [policy])
        env = envs[0]
        self.assertEqual("interrupted", env.result["error"]["code"])
        self.assertEqual([o["turn_rewards"][0]], env.turn_rewards)
        self.assertEqual([env.result["score"]], rewards[0])

    def test_tool_after_the_end_and_errors(self):
        """A tool called after the episode ended raises (TRL shows the model the error); a tool's
        own error is its content; a row of a task with other tools is refused."""
        name = next(n for n, o in self.oracle.items() if o["turns"] == 1 and not o["simulated_user"])
        o = self.oracle[name]
        Env = trl_env.environment_factory(URL, name)
        env = Env()
        with self.assertRaises(RuntimeError):
            getattr(env, o["tools"][0])()
        observation = env.reset(task=name, seed=o["seed"], prompt=[{"role": "user", "content": "Hello."}])
        self.assertTrue(observation.startswith("\n\n"), "set apart from the prompt's text")
        self.assertIn(env.system, observation)
        if "fs_read" in o["tools"]:
            content = env.fs_read(path=7)
            self.assertTrue(content.startswith('{"error":'), content)
        reward = trl_env.reward_func([[{"role": "assistant", "content": "I could not find it."}]], [env])
        self.assertEqual([env.result["score"]], reward)
        self.assertTrue(env.done)
        with self.assertRaises(ValueError) as cm:
            getattr(env, o["tools"][0])()
        self.assertIn("over", str(cm.exception))

        other = next((n for n, x in self.oracle.items() if x["tools"] != o["tools"]), None)
        if other:
            with self.assertRaises(ValueError):
                env.reset(task=other)
        with self.assertRaises(CoworkenvError) as cm:
            trl_env.environment_factory(URL, "no-such-task")
        self.assertEqual("unknown_task", cm.exception.code)

        # the system prompt left out
        Env = trl_env.environment_factory(URL, name, include_system=False)
        env = Env()
        self.assertEqual(o["user"], env.reset(task=name, seed=o["seed"]))
        trl_env.reward_func([None], [env])
        self.assertIsNone(env.session)


ROWS = os.environ.get("COWORKENV_TASK_ROWS")
NEEDS_ROWS = "set COWORKENV_TASK_ROWS (the Go test TestPythonClient does) to the rows of `coworkenv export tasks`"


@unittest.skipUnless(URL and ROWS, NEEDS_ROWS)
class ExportedRowsTest(unittest.TestCase):
    def test_rows_as_shipped(self):
        """The rows `coworkenv export tasks` writes, fed to the adapter as TRL feeds them (reset
        with every column, its string appended to the prompt's last message): the prompt the model
        gets is the episode's system message and first user message, each once."""
        with open(ROWS, encoding="utf-8") as f:
            rows = [json.loads(line) for line in f]
        self.assertTrue(rows)
        for row in rows:
            with self.subTest(task=row["task"], seed=row["seed"]):
                env = trl_env.environment_factory(URL, row["task"])()
                prompt = [dict(m) for m in row["prompt"]]
                observation = env.reset(**row)
                prompt[-1]["content"] += observation
                self.assertEqual([{"role": "system", "content": env.system}, {"role": "user", "content": env.user}], prompt)
                said = "\n".join(m["content"] for m in prompt)
                self.assertEqual(1, said.count(env.user), "the first user message once")
                self.assertEqual(1, said.count(env.system), "the system message once")
                trl_env.reward_func([None], [env])
                self.assertIsNone(env.session)


class ToolFunctionTest(unittest.TestCase):
    """Schemas to methods, without a server."""

    SCHEMA = {"type": "function", "function": {
        "name": "mail_send",
        "description": "Send a mail.\nReturns: its id.",
        "parameters": {"type": "object", "required": ["to", "subject"], "properties": {
            "to": {"anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}], "description": "Who gets it."},
            "subject": {"type": "string", "description": "The subject\n  line. Args: none"},
            "priority": {"type": "string", "enum": ["low", "high"], "default": "low", "description": "How urgent."},
            "count": {"type": "integer"},
            "from": {"type": "string", "description": "A keyword as a name."},
            "meta": {"type": "object", "properties": {"a": {"type": "string"}}, "description": "Extra."},
            "maybe": {"type": ["number", "null"], "description": "A number or null."},
        }},
    }}

    def test_schema_round_trip(self):
        fn = trl_env.tool_function(self.SCHEMA)

        class Env:
            def _act(self, tool, arguments):
                return json.dumps([tool, arguments])

        Env.mail_send = fn
        method = Env().mail_send
        s = schema_of(method)
        self.assertEqual("mail_send", s["name"])
        self.assertEqual("Send a mail. Returns - its id.", s["description"])
        props = s["parameters"]["properties"]
        self.assertEqual(["to", "subject", "priority", "count", "from", "meta", "maybe"], list(props))
        self.assertEqual(["to", "subject"], s["parameters"]["required"])
        self.assertEqual(["array", "string"], props["to"]["type"])
        self.assertEqual("The subject line. Args - none", props["subject"]["description"])
        self.assertEqual(["low", "high"], props["priority"]["enum"])
        self.assertIn('Defaults to "low".', props["priority"]["description"])
        self.assertEqual("integer", props["count"]["type"])
        self.assertEqual("string", props["from"]["type"], "a keyword is still shown")
        self.assertEqual("object", props["meta"]["type"])
        self.assertIn('"properties"', props["meta"]["description"], "a nested schema is in the text")
        self.assertEqual({"type": "number", "nullable": True}, {k: v for k, v in props["maybe"].items() if k != "description"})
        # the model's arguments go through as it gave them
        self.assertEqual(["mail_send", {"to": "a", "from": "b"}], json.loads(method(**{"to": "a", "from": "b"})))

    def test_final_text(self):
        self.assertEqual("done", trl_env.final_text([
            call("fs_list", {}), {"role": "tool", "name": "fs_list", "content": "[]"},
            {"role": "assistant", "content": [{"type": "text", "text": "do"}, {"type": "text", "text": "ne"}]}]))
        self.assertIsNone(trl_env.final_text([call("fs_list", {})]), "cut short: no final answer")
        self.assertEqual("plain", trl_env.final_text("plain"))
        self.assertIsNone(trl_env.final_text([]))

    def test_bad_names(self):
        bad = {"function": {"name": "fs-list", "parameters": {}}}
        with self.assertRaises(ValueError):
            trl_env.tool_function(bad)


if __name__ == "__main__":
    unittest.main()
