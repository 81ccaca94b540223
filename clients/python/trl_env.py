"""An example adapter: coworkenv tasks as environments for TRL's GRPOTrainer (`environment_factory`).

Standard library only, next to coworkenv_client.py. A sketch of a training script (TRL, datasets
and a model are yours to install; this file does not import them):

    from datasets import Dataset
    from trl import GRPOConfig, GRPOTrainer
    import trl_env

    URL = "http://127.0.0.1:8080"                     # a running `coworkenv serve`
    Env = trl_env.environment_factory(URL, "consult-vat-reverse-charge")
    dataset = Dataset.from_list(trl_env.dataset_rows(["consult-vat-reverse-charge"], seeds=range(64)))
    trainer = GRPOTrainer(
        model="Qwen/Qwen3-0.6B",
        train_dataset=dataset,
        reward_funcs=trl_env.reward_func,
        environment_factory=Env,
        args=GRPOConfig(max_completion_length=4096),
    )
    trainer.train()

Several tasks with different tools: `environment_factory=trl_env.environment_factories(URL, names)`
(one environment per task) and `dataset_rows(names, ..., environment=True)`, whose rows carry
the `environment` field TRL selects the environment by.

What this relies on in TRL, and where it is written (TRL's main branch as of July 2026:
docs/source/openenv.md, docs/source/grpo_trainer.md "Tools" to "Multiple environments", and
trl/trainer/grpo_trainer.py; transformers >= 5.2 is required there). TRL marks
`environment_factory` experimental: check these against the version you install.

1. `environment_factory` is a callable taking no arguments that returns an environment object,
   or a dict {name: such a callable}; with a dict each dataset row names its environment in an
   `environment` field, and only that environment's tools are shown for the row. The trainer
   creates one instance per rollout, keeps them in a pool and reuses them: "construct once, reset
   often". Configuration (the server's URL) is captured from the enclosing scope.
   Sources: TRL docs/source/openenv.md, "How `environment_factory` works" (Environment class
   requirements: `__init__(self)` takes no arguments); grpo_trainer.md, "Multiple environments"
   (the `environment` field "is consumed by the trainer and is **not** forwarded to `reset`");
   trl/trainer/grpo_trainer.py, the GRPOTrainer docstring of `environment_factory` and the pool
   (`_environment_pool`).
2. The tools are found once, when the trainer is built, on one probe instance:
   `inspect.getmembers(instance, predicate=inspect.ismethod)`, every bound method whose name
   does not start with "_", except `reset` and `get_reward`. So the tool methods must exist on
   the class before any `reset`, and the instances of one factory all have the same tools: the
   factory is made for one task (whose tools it reads from the server when it is made), and a
   row may only name another task with exactly the same tools. Every other public method would
   become a tool too, so this class has none. Source: trl/trainer/grpo_trainer.py,
   GRPOTrainer.__init__ (the loop over `self.environment_factories`) and the per-batch
   `_sync_tool_dicts`.
3. The tool schemas the model is shown come from the methods' signatures and docstrings:
   TRL passes the methods as `tools=` to `apply_chat_template` (and to `get_json_schema` for
   vLLM's server mode), and transformers' `get_json_schema` needs a docstring, a type hint on
   every argument, a Google-style "Args:" line for every argument (an argument without one is an
   error), takes "required" from the arguments without a default, and reads an enum from
   "(choices: [...])" at the end of an argument's line. Nested schemas are not expressed (a
   list's item type is, an object's fields are not). Sources: TRL docs/source/openenv.md
   ("Each tool method must have a docstring with `Args:` descriptions"); the GRPOTrainer
   docstring of `tools` (Google-style docstrings, type hints, link to transformers' chat_extras
   "passing tools"); trl/trainer/grpo_trainer.py `_tokenize_prompts`
   (`apply_chat_template(..., tools=self._env_tools[name])`); trl/generation/vllm_client.py
   (`get_json_schema(tool) if callable(tool)`); transformers
   src/transformers/utils/chat_template_utils.py (`get_json_schema`,
   `parse_google_format_docstring`, `_convert_type_hints_to_json_schema`).
4. A tool call runs `method(**arguments)` with the arguments the model wrote; the result is
   shown to the model as `str(result)`; an exception is caught and shown as
   `{"error": str(exception)}`, which the docs recommend to say an action is invalid or the
   episode is over. Source: trl/trainer/grpo_trainer.py `_tool_call_loop`; openenv.md,
   "Tips for environment classes" (Error handling).
5. `reset(**row)` is called at the start of each rollout with the dataset row's columns as
   keywords (without `environment` in the dict form). A string it returns is appended to the
   content of the prompt's last message; the default prompt of a row without one is a user
   message with empty content. Source: trl/trainer/grpo_trainer.py
   `_generate_and_score_completions` (`environment.reset(**reset_kwargs)`, `content + observation`).
6. The rollout ends when the model answers without a tool call (or runs out of
   `max_completion_length`, or `max_tool_calling_iterations`); the environment is not told. Reward
   functions are called with `prompts`, `completions` (conversational: the assistant and tool
   messages of the rollout, last the final answer), the row's other columns and `environments`,
   the instances in the same order, and return one float per rollout. An environment may instead
   own its reward with `get_reward(self)`, which takes no argument; its reward is added to the
   reward functions' (all sources are summed). Sources: openenv.md ("Reward functions", "How
   environment_factory works" point 5); grpo_trainer.md ("An environment class has two reserved
   methods: `reset` and `get_reward`", and environment-owned and trainer-owned rewards "are
   summed"); trl/trainer/grpo_trainer.py `_calculate_rewards` (`reward_kwargs["environments"]`)
   and the GRPOTrainer docstring of `environment_factory` (`get_reward`).

How a coworkenv episode maps onto that:

- The task's tools are the environment's methods, generated from the session's JSON Schemas
  (point 3): the tool's description, then "Args:" with each parameter's description, its default
  and its choices. A call returns the tool message a model gets from coworkenv (a tool's error is
  that message too, {"error": ...}, not an exception), so it reads as `run` or `serve` shows it.
- `reset(**row)` creates a session of the row's `task` (default: the factory's task) with the
  row's `seed` (default 0), and returns the system prompt and the first user message (point 5):
  TRL gives no other way to set the system prompt, which carries the user's address and the
  time. `include_system=False` returns the user message alone. A row whose prompt holds the
  episode's first user message already (the rows of `coworkenv export tasks`: the system message
  and the first user message) gets nothing more: reset returns "", so the prompt is said once.
- The model's final answer is the turn's reply. Since the environment does not see it (point 6),
  `reward_func` sends it, reads the verdict and deletes the session, and returns the episode's
  score (result["score"]). This is why the reward is a reward function and not `get_reward`
  (which cannot see the answer); the class has no `get_reward`, so the score is not counted
  twice.
- A task whose user is simulated, or with more than one turn, needs messages within the rollout:
  the environment then also has the tool `message_user(message)` (the name is configurable), a
  message to the user whose result is the user's answer or the next turn's message (a turn's
  reply, when the turn has no simulated user). The final answer is the last turn's reply.
- When a turn ends inside a call (a call past max_calls_per_turn), the tool's result says so and
  carries the next user message. An episode that has not ended when the rollout does (a
  multi-turn task whose model stopped early) is closed: it ends with the error `interrupted`,
  and its score is what its verifiers give it then (usually 0).
"""

import inspect
import json
import keyword
import re
import typing

from coworkenv_client import Client, CoworkenvError

__all__ = ["environment_factory", "environment_factories", "dataset_rows", "reward_func", "final_text", "tool_function"]

# The names TRL does not take for tools (point 2).
_RESERVED = ("reset", "get_reward")

# What ends a turn inside a call, and an episode that is over, as the model is told.
_OVER = "The conversation is over."


def environment_factory(base_url, task, *, token=None, timeout=120.0, seed=0, include_system=True,
                        user_tool="auto", tools=None, name=None):
    """Returns an environment class for TRL's `environment_factory`, for one task of the server.

    The class takes no arguments (TRL creates the instances). Its tool methods are the task's
    tools, read from the server now (a session is created and deleted to read them) unless tools
    (the "tools" of a created session) are given. seed is the seed of a row without one.
    user_tool is the name of the tool that messages the user: "auto" gives the tool
    "message_user" to a task whose user is simulated or that has more than one turn and none to
    others, None never gives it, another name always gives it under that name.
    """
    client = Client(base_url, token=token, timeout=timeout)
    info = next((t for t in client.tasks() if t["name"] == task), None)
    if info is None:
        raise CoworkenvError("unknown_task", "no task %r on %s" % (task, client.base_url))
    if tools is None:
        with client.create(task, seed) as probe:
            tools = probe.tools
    if user_tool == "auto":
        user_tool = "message_user" if info.get("simulated_user") or info.get("turns", 1) > 1 else None
    methods = {}
    for schema in tools:
        fn = tool_function(schema)
        methods[fn.__name__] = fn
    if user_tool:
        if user_tool in methods:
            raise ValueError("the task %s has a tool %r already: give user_tool another name" % (task, user_tool))
        methods[user_tool] = _user_tool_function(user_tool)
    for n in methods:
        if n in _RESERVED or n.startswith("_"):
            raise ValueError("the task %s has a tool %r, a name TRL does not take for a tool" % (task, n))
    attrs = dict(methods)
    attrs.update({
        "__doc__": "The coworkenv task %s as a TRL environment: %s" % (task, info.get("description", "")),
        "__init__": _init,
        "reset": _reset,
        "_finish": _finish,
        "_close": _close,
        "_act": _act,
        "_base_url": client.base_url,
        "_token": token,
        "_timeout": timeout,
        "_task": task,
        "_seed": seed,
        "_tools": tools,
        "_tools_key": _tools_key(tools),
        "_include_system": include_system,
        "_user_tool": user_tool,
    })
    return type(name or _class_name(task), (object,), attrs)


def environment_factories(base_url, tasks, **options):
    """{task: environment class} for TRL's dict form of `environment_factory`: each row names its
    task in its `environment` field (dataset_rows(..., environment=True) writes it)."""
    return {task: environment_factory(base_url, task, **options) for task in tasks}


def dataset_rows(tasks, seeds=(0,), environment=False):
    """Rows for `datasets.Dataset.from_list`: one per task and seed, with an empty user prompt
    (reset gives the task's messages), the task and the seed, and with environment=True the
    `environment` field the dict form of environment_factory selects by."""
    rows = []
    for task in tasks:
        for seed in seeds:
            row = {"prompt": [{"role": "user", "content": ""}], "task": task, "seed": int(seed)}
            if environment:
                row["environment"] = task
            rows.append(row)
    return rows


def reward_func(completions, environments, **kwargs):
    """The reward function: for each rollout, sends the model's final answer as the reply (when the
    episode is not over yet), and returns the episode's score; the session is deleted. The score
    and the verdict stay on the environment: env.reward, env.result, env.turn_rewards. An
    environment that is not one of these (several environments in one run) gets None, which TRL
    leaves out of the sum."""
    return [env._finish(final_text(c)) if hasattr(env, "_finish") else None for c, env in zip(completions, environments)]


def final_text(completion):
    """The model's final answer in a completion as TRL gives it to reward functions: a
    conversational completion's last assistant message's text (None when that message still has
    tool calls: the rollout was cut short), or the text of a standard one."""
    if isinstance(completion, str):
        return completion
    for message in reversed(list(completion or [])):
        if message.get("role") != "assistant":
            continue
        if message.get("tool_calls"):
            return None
        return _text(message.get("content"))
    return None


def tool_function(schema):
    """A method for a tool (a chat-completions function schema, as a session's "tools" has it)
    that calls the tool with the keyword arguments the model gave. Its name is the tool's; its
    signature and Google-style docstring describe the parameters so that transformers'
    get_json_schema gives back the tool's schema: the types (a union of simple types and a list's
    item type included), which parameters are required, the descriptions, and the choices of a
    string enum; a parameter's default is in its description, and a nested schema as JSON."""
    fn = schema.get("function", schema)
    name = fn["name"]
    if not name.isidentifier() or keyword.iskeyword(name):
        raise ValueError("tool %r: not a Python identifier, so it cannot be a method" % name)
    params = fn.get("parameters") or {}
    props = params.get("properties") or {}
    required = set(params.get("required") or [])
    sig = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    annotations = {}
    arg_lines = []
    # Python wants the required parameters first; the model calls with keywords, so the order is
    # only the schema's.
    order = [p for p in props if p in required] + [p for p in props if p not in required]
    for pname in order:
        pschema = props[pname] if isinstance(props[pname], dict) else {}
        if not pname.isidentifier():
            raise ValueError("tool %s: parameter %r is not a Python identifier" % (name, pname))
        ann = _annotation(pschema)
        annotations[pname] = ann
        if not keyword.iskeyword(pname):
            # a keyword cannot be in a signature; get_json_schema takes the properties from the
            # annotations, so such a parameter is still shown, as optional
            default = inspect.Parameter.empty if pname in required else pschema.get("default")
            sig.append(inspect.Parameter(pname, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=ann))
        arg_lines.append("    %s: %s" % (pname, _param_doc(pschema, pname in required or keyword.iskeyword(pname))))
    annotations["return"] = str
    doc = _clean(fn.get("description") or "Calls the tool %s." % name)
    if arg_lines:
        doc += "\n\nArgs:\n" + "\n".join(arg_lines)
    doc += "\n\nReturns:\n    The tool's result as JSON text, or {\"error\": ...} when the tool failed."

    def tool(self, **arguments):
        return self._act(name, arguments)

    tool.__name__ = tool.__qualname__ = name
    tool.__doc__ = doc
    tool.__annotations__ = annotations
    tool.__signature__ = inspect.Signature(sig, return_annotation=str)
    tool.tool_schema = fn
    return tool


def _user_tool_function(name):
    def message_user(self, message):
        return self._act(None, message)

    message_user.__name__ = message_user.__qualname__ = name
    message_user.__annotations__ = {"message": str, "return": str}
    message_user.__doc__ = (
        "Send a message to the user: a question, or your reply when you have done what they asked. "
        "Returns their answer, or their next request; a message ends the conversation when it "
        "answers the last request.\n\n"
        "Args:\n"
        "    message: The text of the message.\n\n"
        "Returns:\n"
        "    What the user says next, or a note that the conversation is over.")
    return message_user


# The environment's methods. Only reset is public: every other public method is a tool.

def _init(self):
    self.client = Client(self._base_url, token=self._token, timeout=self._timeout)
    self.session = None  # the session of the rollout under way
    self.task = self._task
    self.seed = self._seed
    self.system = self.user = None
    self.done = False
    self.reward = 0.0  # the episode's score, once reward_func has finished it
    self.result = None  # the verdict (the trace's end event and each turn's reward)
    self.turn_rewards = []


def _reset(self, **row):
    """Starts the episode of the row: a session of its task (default: the factory's) and seed."""
    self._close()
    task = row.get("task") or self._task
    seed = row.get("seed")
    seed = self._seed if seed is None else int(seed)
    session = self.client.create(task, seed)
    if task != self._task and _tools_key(session.tools) != self._tools_key:
        session.close()
        raise ValueError("the row's task %s does not have the tools of %s, this environment's task: "
                         "give it its own environment (environment_factories)" % (task, self._task))
    self.session, self.task, self.seed = session, task, seed
    self.system, self.user = session.system, session.user
    self.done, self.reward, self.result, self.turn_rewards = session.done, 0.0, session.result, []
    if session.done:  # ended before its first turn
        self.reward = float(session.reward or 0.0)
        return "%s\n\n%s" % (_OVER, _error_of(session.result))
    prompt = row.get("prompt")
    if _holds(prompt, session.user):
        return ""  # the row's prompt is the episode's (a row of `coworkenv export tasks`): nothing to add
    observation = (session.system + "\n\n" + session.user) if self._include_system else session.user
    if isinstance(prompt, list) and prompt and isinstance(prompt[-1], dict):
        last = prompt[-1].get("content")
        if isinstance(last, str) and last.strip():
            observation = "\n\n" + observation  # TRL appends it to that text as it is
    return observation


def _holds(prompt, user):
    """Whether a row's prompt already holds the episode's first user message, as the rows of
    `coworkenv export tasks` do (with the system message before it)."""
    return isinstance(prompt, list) and any(
        isinstance(m, dict) and m.get("role") == "user" and m.get("content") == user for m in prompt)


def _act(self, tool, arguments):
    """A call of tool (None: a message to the user) as the model sees its result."""
    if self.done or (self.session is None and self.result is not None):
        raise ValueError(_OVER + " Give your final answer without calling a tool.")
    if self.session is None:
        raise RuntimeError("no episode: reset first")
    if tool is None:
        step = self.session.reply(arguments)
        text = step.user or ""
    else:
        step = self.session.call_step(tool, arguments)
        text = step.content or ""
    if step.turn_over:
        self.turn_rewards.append(step.reward)
    if step.done:
        self.done, self.result = True, step.result
        text = (text + "\n\n" if tool is not None else "") + "(" + _OVER + ")"
    elif tool is not None and step.turn_over and step.user:
        # a call that ended the turn (past max_calls_per_turn): the user's next message comes
        text += "\n\n(This turn is over. The user's next message:)\n" + step.user
    return text


def _finish(self, text):
    """Ends the rollout: text (the final answer) is the reply when the episode goes on; then the
    session is deleted. Returns the score. A second call returns it again."""
    if self.session is None:
        return self.reward
    try:
        if not self.done and text is not None:
            step = self.session.reply(text)
            if step.turn_over:
                self.turn_rewards.append(step.reward)
            if step.done:
                self.done, self.result = True, step.result
        state = self.session.close()
        if self.result is None and state is not None:
            self.result = state.get("result")  # closed unfinished: the error interrupted
    finally:
        self.session = None
    self.reward = float((self.result or {}).get("score") or 0.0)
    return self.reward


def _close(self):
    """Deletes the session of the rollout, if it is still there."""
    session, self.session = self.session, None
    if session is not None:
        try:
            session.close()
        except CoworkenvError as e:
            if e.code != "unknown_session":  # closed for idleness: nothing to do
                raise


# Schemas to signatures and docstrings.

_SIMPLE = {"string": str, "integer": int, "number": float, "boolean": bool}


def _annotation(schema):
    """The type hint get_json_schema turns back into the schema's type (as near as it can)."""
    t = schema.get("type")
    if isinstance(t, list):
        kinds = [_annotation(dict(schema, type=x)) for x in t if x != "null"]
        ann = kinds[0] if len(kinds) == 1 else typing.Union[tuple(kinds)] if kinds else typing.Any
        return typing.Optional[ann] if "null" in t else ann
    if t in _SIMPLE:
        return _SIMPLE[t]
    if t == "array":
        items = schema.get("items")
        return typing.List[_annotation(items)] if isinstance(items, dict) and items else list
    if t == "object":
        return dict
    for key in ("anyOf", "oneOf"):
        if isinstance(schema.get(key), list):
            kinds = [_annotation(s) for s in schema[key] if isinstance(s, dict) and s.get("type") != "null"]
            if kinds:
                ann = kinds[0] if len(kinds) == 1 else typing.Union[tuple(kinds)]
                nullable = any(isinstance(s, dict) and s.get("type") == "null" for s in schema[key])
                return typing.Optional[ann] if nullable else ann
    if "enum" in schema and all(isinstance(v, str) for v in schema["enum"]):
        return str
    return typing.Any


def _param_doc(schema, required):
    """A parameter's line in "Args:": its description, its default, a nested schema, its choices
    (last: get_json_schema reads them only at the end of the line)."""
    parts = [_clean(schema.get("description") or schema.get("title") or "")]
    if not required and "default" in schema:
        parts.append("Defaults to %s." % json.dumps(schema["default"], ensure_ascii=False))
    nested = {k: v for k, v in schema.items() if k in ("properties", "anyOf", "oneOf", "allOf", "items")
              and not _expressed(k, v)}
    if nested:
        parts.append("Schema: %s." % _clean(json.dumps(nested, ensure_ascii=False)))
    enum = schema.get("enum")
    if isinstance(enum, list) and enum:
        if all(isinstance(v, str) for v in enum):
            parts.append("(choices: %s)" % json.dumps(enum, ensure_ascii=False))
        else:
            parts.append("One of %s." % json.dumps(enum, ensure_ascii=False))
    return " ".join(p for p in parts if p) or "(no description)"


def _expressed(key, value):
    """Whether the type hint says all of a nested part: a list of a simple type, or a union of
    simple types and such lists."""
    def simple(s):
        return isinstance(s, dict) and set(s) <= {"type", "description"} and s.get("type") in _SIMPLE

    def simple_or_list(s):
        return simple(s) or (isinstance(s, dict) and s.get("type") == "array" and set(s) <= {"type", "items", "description"}
                             and (not s.get("items") or simple(s["items"])))

    if key == "items":
        return simple(value)
    if key in ("anyOf", "oneOf"):
        return isinstance(value, list) and all(simple_or_list(s) or (isinstance(s, dict) and s.get("type") == "null") for s in value)
    return False


_SECTION = re.compile(r"\b(Args|Arguments|Returns|Raises|Yields)\s*:")


def _clean(text):
    """One line, and no word a Google-style docstring parser takes for a section."""
    text = " ".join(str(text).split())
    return _SECTION.sub(lambda m: m.group(1) + " -", text)


def _tools_key(tools):
    return json.dumps(tools, sort_keys=True)


def _class_name(task):
    return "Coworkenv_" + re.sub(r"\W", "_", task)


def _text(content):
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts
        return "".join(p.get("text", "") for p in content if isinstance(p, dict) and p.get("type", "text") == "text")
    return str(content)


def _error_of(result):
    err = (result or {}).get("error") or {}
    return err.get("message", "") if isinstance(err, dict) else str(err)
