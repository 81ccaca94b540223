// Package workspace is the in-memory state of one episode: files, mail, calendar, db records,
// the virtual clock and the seeded random source.
//
// # Copy on write
//
// Every entry (a file's content, a message, an event, a record) is an immutable value held by
// pointer in a per-section map. Fork copies only the section headers: parent and child share the
// maps, and whichever of them writes a section first clones that section's map (for db, the
// collection map and then the one collection written). A fork is therefore O(1) and a write costs
// at most one clone of the section it touches.
//
// Freeze makes a state read-only for good: every mutating method then returns ErrFrozen, and
// Fork, Hash and every reading method of a frozen state may be called from many goroutines at
// once. A state that is not frozen belongs to one goroutine at a time, and Fork of it counts as a
// write to it (both sides lose ownership of the shared maps).
//
// # Hash
//
// Hash is "sha256:<hex>" of a canonical encoding of files (with folders), mail (with the
// address and the id counter), calendar (with its counter), db (with each collection's counter
// and insertion order) and the clock. Each entry's hash is computed once when the entry is made
// and shared by every fork; each section caches its hash until it is written, so hashing after a
// tool call re-hashes only the list of keys of the sections that changed. The random source is
// not part of the hash: only the sections above, the services' parts and the clock are.
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
