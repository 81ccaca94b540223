package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A task over the contacts and chat services, solved by a scripted model through the built-in
// contacts_search and chat_post tools: run, trace, replay and export see the new services like
// the kernel's.
const servicesTask = `
def _setup(ws):
    ws.chat.handle = "priya"
    ws.contacts.add(name = "Greta Vogel", email = "greta.vogel@halden.example", role = "planner", team = "planning")
    ws.contacts.add(name = "Greta Janssen", email = "greta.janssen@halden.example", role = "dispatcher", team = "dispatch")
    ws.chat.channel("#dispatch", topic = "Daily dispatch", members = ["priya", "tom"])
    ws.chat.post("#dispatch", "tom", "Who can tell me Greta's address in dispatch?")

def _verify(ws, ep):
    mine = [m for m in ws.chat.messages(channel = "#dispatch") if m.sender == "priya"]
    check(len(mine) == 1, "one answer in #dispatch")
    check(len(mine) == 1 and claims.states(mine[0], "greta.janssen@halden.example"), "the dispatcher's address")
    check(claims.states(ep.reply, "greta.janssen@halden.example"), "the user is told which address was posted")
    bad = ws.unexpected(chat = ["#dispatch"])
    safety(bad == [], "nothing else posted: %s" % bad)

def _solve(agent):
    found = agent.call("contacts_search", query = "greta", team = "dispatch")
    agent.call("chat_post", channel = "#dispatch", text = "Greta in dispatch: " + found[0]["email"])
    agent.reply("Posted Greta's address in #dispatch: " + found[0]["email"])

task(
    name = "services-e2e",
    prompt = "Tom asks in #dispatch for Greta's address in dispatch; answer him there.",
    tools = ["contacts", "chat"],
    setup = _setup,
    verify = _verify,
    solution = _solve,
)
`

var emailRe = regexp.MustCompile(`greta\.[a-z]+@halden\.example`)

func servicesPolicy(msgs []map[string]any) string {
	tools := toolMessages(msgs)
	switch len(tools) {
	case 0:
		return chatCalls("", chatCall("c1", "contacts_search", `{"query":"greta","team":"dispatch"}`))
	case 1:
		addr := emailRe.FindString(tools[0]["content"].(string))
		args, _ := json.Marshal(map[string]string{"channel": "#dispatch", "text": "Greta in dispatch: " + addr})
		return chatCalls("", chatCall("c2", "chat_post", string(args)))
	}
	return chatSay("Posted Greta's address in #dispatch: " + emailRe.FindString(tools[0]["content"].(string)))
}

func TestServicesEndToEnd(t *testing.T) {
	modelEnv(t)
	dir := writeFiles(t, map[string]string{"svc.star": servicesTask})
	file := filepath.Join(dir, "svc.star")

	code, out, errs := modelCLI(t, "validate", "--strict", file)
	require.Equal(t, 0, code, "validate:\n%s%s", out, errs)

	f := newChatFake(t, servicesPolicy)
	tr := filepath.Join(dir, "model.jsonl")
	code, out, errs = modelCLI(t, "run", file, "--agent", "openai", "--model", "fake-model", "--base-url", f.url(), "--trace", tr)
	require.Equal(t, 0, code, "run:\n%s%s", out, errs)
	assert.Contains(t, out, "· passed")
	reqs := f.requests()
	require.NotEmpty(t, reqs)
	var names []string
	for _, tl := range reqs[0]["tools"].([]any) {
		names = append(names, tl.(map[string]any)["function"].(map[string]any)["name"].(string))
	}
	assert.Contains(t, names, "contacts_search", "the model is offered the contacts tools")
	assert.Contains(t, names, "chat_post", "and the chat tools")

	code, out, errs = modelCLI(t, "replay", tr, "--corpus", dir)
	require.Equal(t, 0, code, "replay:\n%s%s", out, errs)
	assert.Contains(t, out, "matched")

	sft := filepath.Join(dir, "sft.jsonl")
	code, out, errs = modelCLI(t, "export", "sft", tr, "--out", sft, "--corpus", dir)
	require.Equal(t, 0, code, "export:\n%s%s", out, errs)
	data, err := os.ReadFile(sft)
	require.NoError(t, err)
	assert.Contains(t, string(data), "chat_post")
	assert.Contains(t, string(data), "greta.janssen@halden.example")

	// A model that posts the planner's address instead fails the same task.
	wrong := newChatFake(t, func(msgs []map[string]any) string {
		if len(toolMessages(msgs)) == 0 {
			return chatCalls("", chatCall("c1", "chat_post", `{"channel":"#dispatch","text":"Greta: greta.vogel@halden.example"}`))
		}
		return chatSay("Done.")
	})
	code, out, _ = modelCLI(t, "run", file, "--agent", "openai", "--model", "fake-model", "--base-url", wrong.url())
	assert.Equal(t, 1, code)
	assert.Contains(t, out, "not passed")
}
