package main

// Exit statuses: every command ends with one of these, by one rule (exitStatusHelp).
const (
	exitOK      = 0 // everything asked was done, and every verdict is positive
	exitNegated = 1 // the command ran; a verdict is negative or some work was left undone
	exitUsage   = 2 // the command could not run as asked; nothing was run
)

// exitStatusHelp is the rule every command follows, as `coworkenv --help`, every command's
// --help and the README's "Exit status" paragraph give it.
const exitStatusHelp = `Exit status (every command):
  0  everything asked was done, and every verdict is positive.
  1  the command ran, and a verdict is negative or some work was left undone: a task invalid (with
     --strict, a warning too); a task file that does not load (a syntax error, an empty file, a
     file that declares no task, a file found in a folder that cannot be read; rollout runs the
     other files and counts it); an episode not passed (in rollout: any sample); a sample failed
     or interrupted; a trace that export leaves out as unreadable, unverified, diverged or changed
     (not one its kind leaves out by rule, as sft does failed episodes), or that does not replay;
     fewer tasks generated than asked.
  2  the command could not run as asked, and nothing was run: bad usage, a path named on the
     command line that does not exist or cannot be read, a folder that holds no task file (or no
     trace), an output refused.`
