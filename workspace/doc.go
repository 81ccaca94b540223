// Package workspace is the in-memory state of one episode: files, mail, calendar, db records,
// the virtual clock and the seeded random source.
//
// # Persistent sections
//
// Every entry (a file's content, a message, an event, a record, a part's entry) is an immutable
// value held by pointer in a persistent sorted map (package workspace/internal/pmap) whose nodes
// never change: files and folders by path, messages and events by id and by date (the index of
// listings), each collection's records by id and by insertion order, each part's entries by key.
// Fork copies the State struct and shares every node: O(1), and it writes nothing to the state it
// forks. A write makes O(log n) new nodes along one path and shares the rest, so a fork of a
// workspace of 100,000 entries and its first write cost about as much as they do with 100.
// Listings walk these maps in the order they return and stop at their limit.
//
// Freeze makes a state read-only for good: every mutating method then returns ErrFrozen, and
// Fork, Hash and every reading method of a frozen state may be called from many goroutines at
// once. A state that is not frozen belongs to one goroutine at a time.
//
// # Hash
//
// Hash is "sha256:<hex>" of a canonical encoding of files (with folders), mail (with the
// address and the id counter), calendar (with its counter), db (each collection by name, with
// its counter and insertion order), the services' parts and the clock. The random source is not
// part of it. In HashFormat2, each section contributes its number of entries and the sum modulo
// 2^512 of one SHA-512 digest per entry (of its key and its content's digest; a record's digest
// also names the record inserted before it, so the sum covers the insertion order without the
// numbers it is kept by). Each write subtracts the digest of what it replaces and adds that of
// what it stores, so the hash after a write costs O(1) per section, collection and part, however
// many entries they hold, and the sum does not depend on the order the entries were made in.
// HashFormat1, the earlier definition (each section's sorted keys and digests hashed in full),
// is kept for the replay of traces recorded with it (WithHashFormat).
//
// # Diff
//
// Diff compares two states section by section with pmap.Diff, which skips the subtrees the two
// share: comparing an episode's state with the state after setup or with the reference's end
// state costs the entries that differ, not the size of the workspace.
//
// # Choices where the contract is silent
//
//   - Files: an existing file as the target of Move is an error ("already exists"); nothing is
//     overwritten or merged. A target ending in "/" or naming an existing folder receives src
//     under its own name. Glob matches files only. Removing a file keeps its folder.
//   - Mail: the Subject filter is a case-insensitive substring. A folder exists while a message
//     is in it. Addresses are checked lightly (not empty, holds "@"). Attachment names are
//     unique within a message. Forward quotes a "Cc:" line only when the original had cc.
//   - Calendar: the title must not be empty; attendees are any non-empty strings.
//   - Times: see ParseTime; fractions of a second are dropped.
//   - DB: a collection stays (with its id counter) once created; "/" is not allowed in its name.
//   - Diff lists files only (a folder shows through the files it holds), sorted with
//     NaturalCompare.
//
// # Determinism
//
// Nothing here reads the wall clock or a global random source, and no Go map order reaches an
// output or a hash: every listing is sorted as documented on its method.
package workspace
