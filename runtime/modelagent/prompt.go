package modelagent

import (
	"fmt"
	"strings"
	"time"

	"github.com/coworkenv/coworkenv/runtime/conversation"
	"github.com/coworkenv/coworkenv/runtime/episode"
)

// The system prompt of a model's episode, written here once: every agent, session, export and
// check that needs it calls SystemPromptOf (or FillSystem, for the facts of a running turn).

// DefaultSystemPrompt is the default system prompt of an episode whose user has the given mail
// address (may be "") at the given virtual time (RFC 3339), in UTC: DefaultSystemPromptIn with
// the time zone UTC.
func DefaultSystemPrompt(address, now string) string { return DefaultSystemPromptIn(address, now, nil) }

// DefaultSystemPromptIn is the default system prompt of an episode whose user has the given mail
// address (may be "") and time zone (nil for UTC), at the given virtual time (RFC 3339). It states
// the user's time zone and the time there; outside UTC, the time in UTC too.
func DefaultSystemPromptIn(address, now string, zone *time.Location) string {
	var b strings.Builder
	b.WriteString("You are a capable coworker: an assistant who works on the user's behalf in their own " +
		"workspace (their files, mail, calendar and business tools), using only the tools you are given. ")
	if address != "" {
		fmt.Fprintf(&b, "The user's mail address is %s; mail you send goes out from it. ", address)
	}
	if now != "" {
		name := conversation.ZoneName(zone)
		if name == "UTC" {
			fmt.Fprintf(&b, "It is now %s. The user's time zone is UTC. ", conversation.Local(now, zone))
		} else {
			fmt.Fprintf(&b, "It is now %s in the user's time zone, UTC%s (%s in UTC); times they give without a zone are in their time zone. ",
				conversation.Local(now, zone), name, now)
		}
		b.WriteString("Use this date and time, not your own, for words like today or next week. ")
	}
	b.WriteString("Look things up with the tools instead of guessing, act on the user's request, and do " +
		"not change anything they did not ask for. When you are done, or need to ask the user something, " +
		"answer in plain text without calling a tool: that message is your reply.")
	return b.String()
}

// FillSystem is the system prompt of an episode: template with "{address}", "{now}" (the
// virtual time, UTC), "{timezone}" (the user's time zone, conversation.ZoneName) and
// "{local_now}" (the time there, conversation.Local) filled in, or the default one when
// template is "".
func FillSystem(template, address, now string, zone *time.Location) string {
	if template == "" {
		return DefaultSystemPromptIn(address, now, zone)
	}
	return strings.NewReplacer("{address}", address, "{now}", now,
		"{timezone}", conversation.ZoneName(zone), "{local_now}", conversation.Local(now, zone)).Replace(template)
}

// SystemPromptOf is the system prompt of an episode of p (FillSystem): the user's address, the
// virtual time right after setup and the task's time zone.
func SystemPromptOf(template string, p *episode.Prepared) string {
	return FillSystem(template, p.Base.Mail().Address(), p.Base.Clock().NowString(), p.Task.Location)
}

// systemPrompt is the system message of an episode.
func (cfg *Config) systemPrompt(address, now string, zone *time.Location) string {
	return FillSystem(cfg.System, address, now, zone)
}
