package workspace

import (
	"cmp"
	"crypto/sha256"
	"errors"
	"fmt"
	"iter"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/coworkenv/coworkenv/internal/limits"
	"github.com/coworkenv/coworkenv/workspace/internal/pmap"
	"github.com/coworkenv/coworkenv/workspace/timefmt"
)

// Attachment is a file attached to a message.
type Attachment struct{ Name, Content string }

// Message is one mail message. Values returned by Mail are copies: changing them changes
// nothing.
type Message struct {
	ID          string
	Sender      string
	To, Cc      []string
	Subject     string
	Body        string
	Date        string // RFC 3339, timefmt.Layout
	Folder      string
	Read        bool
	Labels      []string
	Thread      string // id of the first message of the thread
	InReplyTo   string // "" when none
	Attachments []Attachment
}

// AttachmentNames returns the names of m's attachments, in order.
func (m Message) AttachmentNames() []string {
	out := make([]string, len(m.Attachments))
	for i, a := range m.Attachments {
		out[i] = a.Name
	}
	return out
}

func (m Message) clone() Message {
	m.To = slices.Clone(m.To)
	m.Cc = slices.Clone(m.Cc)
	m.Labels = slices.Clone(m.Labels)
	m.Attachments = slices.Clone(m.Attachments)
	return m
}

// Mail is the mailbox of a state. Message ids are "m1", "m2", … from one counter shared by
// delivered and sent mail.
type Mail State

type msgEntry struct {
	m   Message // never changed; its slices are never shared with callers
	t   time.Time
	num int
	sum [32]byte
}

func newMsgEntry(m Message, t time.Time, num int) *msgEntry {
	b := make([]byte, 0, 256+len(m.Body))
	b = appendStr(b, m.ID)
	b = appendStr(b, m.Sender)
	b = appendStrs(b, m.To)
	b = appendStrs(b, m.Cc)
	b = appendStr(b, m.Subject)
	b = appendStr(b, m.Body)
	b = appendStr(b, m.Date)
	b = appendStr(b, m.Folder)
	b = appendBool(b, m.Read)
	b = appendStrs(b, m.Labels)
	b = appendStr(b, m.Thread)
	b = appendStr(b, m.InReplyTo)
	b = appendUint(b, uint64(len(m.Attachments)))
	for _, a := range m.Attachments {
		b = appendStr(b, a.Name)
		b = appendStr(b, a.Content)
	}
	return &msgEntry{m: m, t: t, num: num, sum: sha256.Sum256(b)}
}

// mailSec holds the messages by id (in natural order) and by folder and date (the index of
// listings), each message in both.
type mailSec struct {
	byID    pmap.Map[string, *msgEntry]
	index   pmap.Map[msgKey, *msgEntry]
	sum     digestSum // the messages; address and next are hashed by State.Hash
	next    int       // number of the last id given
	address string
}

// msgKey orders the index: by folder, then oldest first (by date as an instant, then by the
// number in the id).
type msgKey struct {
	folder string
	sec    int64
	nsec   int
	num    int
}

func (e *msgEntry) key() msgKey {
	return msgKey{folder: e.m.Folder, sec: e.t.Unix(), nsec: e.t.Nanosecond(), num: e.num}
}

func compareMsgKeys(a, b msgKey) int {
	return cmp.Or(strings.Compare(a.folder, b.folder), cmp.Compare(a.sec, b.sec), cmp.Compare(a.nsec, b.nsec), cmp.Compare(a.num, b.num))
}

// compareDates orders messages oldest first, whatever their folder.
func compareDates(a, b *msgEntry) int {
	return cmp.Or(a.t.Compare(b.t), cmp.Compare(a.num, b.num))
}

func newMailSec() mailSec {
	return mailSec{byID: pmap.New[string, *msgEntry](NaturalCompare), index: pmap.New[msgKey, *msgEntry](compareMsgKeys),
		address: DefaultAddress}
}

func (e *msgEntry) digest() entryDigest { return digestOf('m', e.m.ID, &e.sum, "") }

// put stores e, new or in place of the message of the same id; o is the writing state's owner
// of nodes.
func (ms *mailSec) put(o *pmap.Owner, e *msgEntry) {
	if old, had := ms.byID.Set(o, e.m.ID, e); had {
		ms.sum.sub(old.digest())
		if k := old.key(); compareMsgKeys(k, e.key()) != 0 {
			ms.index.Delete(o, k)
		}
	}
	ms.index.Set(o, e.key(), e)
	ms.sum.add(e.digest())
}

// folderEnd is the first key of the index after every message of folder.
func folderEnd(folder string) msgKey { return msgKey{folder: folder + "\x00", sec: math.MinInt64} }

// folders yields the folders that hold a message, in byte order: a look-up per folder.
func (ms *mailSec) folders() func(yield func(string) bool) {
	return func(yield func(string) bool) {
		for from := (msgKey{sec: math.MinInt64}); ; {
			k, _, ok := ms.index.Ceil(from)
			if !ok || !yield(k.folder) {
				return
			}
			from = folderEnd(k.folder)
		}
	}
}

// scan yields the messages of folder ("": every folder) oldest first, or newest first.
func (ms *mailSec) scan(folder string, newest bool) func(yield func(*msgEntry) bool) {
	if folder != "" {
		return func(yield func(*msgEntry) bool) {
			if newest {
				for k, e := range ms.index.Down(msgKey{folder: folder, sec: math.MaxInt64, nsec: math.MaxInt, num: math.MaxInt}) {
					if k.folder != folder || !yield(e) {
						return
					}
				}
				return
			}
			for k, e := range ms.index.From(msgKey{folder: folder, sec: math.MinInt64}) {
				if k.folder != folder || !yield(e) {
					return
				}
			}
		}
	}
	// every folder: merge the folders' runs, the next message of each at hand
	return func(yield func(*msgEntry) bool) {
		type run struct {
			next func() (*msgEntry, bool)
			stop func()
			head *msgEntry
		}
		var runs []*run
		defer func() {
			for _, r := range runs {
				r.stop()
			}
		}()
		for f := range ms.folders() {
			next, stop := iter.Pull(ms.scan(f, newest))
			r := &run{next: next, stop: stop}
			r.head, _ = next()
			runs = append(runs, r)
		}
		before := func(a, b *msgEntry) bool { // a comes before b in the order asked
			if newest {
				return compareDates(a, b) > 0
			}
			return compareDates(a, b) < 0
		}
		for {
			var best *run
			for _, r := range runs {
				if r.head != nil && (best == nil || before(r.head, best.head)) {
					best = r
				}
			}
			if best == nil || !yield(best.head) {
				return
			}
			best.head, _ = best.next()
		}
	}
}

// checkAddress validates an address lightly: not empty, with an "@".
func checkAddress(role, a string) error {
	if strings.TrimSpace(a) == "" {
		return fmt.Errorf("%s: empty address", role)
	}
	if !strings.Contains(a, "@") {
		return fmt.Errorf("%s: %q is not an email address", role, a)
	}
	return nil
}

// checkMessage checks what every message that enters the mailbox must satisfy, delivered or
// sent: its recipients, its body and its attachments.
func checkMessage(to, cc []string, body string, atts []Attachment) error {
	if err := checkAddresses("to", to); err != nil {
		return err
	}
	if err := checkAddresses("cc", cc); err != nil {
		return err
	}
	if err := checkBody(body); err != nil {
		return err
	}
	return checkAttachments(atts)
}

func checkAddresses(role string, as []string) error {
	for _, a := range as {
		if err := checkAddress(role, a); err != nil {
			return err
		}
	}
	return nil
}

// checkBody refuses a body over limits.MailBody.
func checkBody(body string) error {
	if len(body) > limits.MailBody {
		return fmt.Errorf("body: %d bytes is over the %s limit of a mail body", len(body), limits.Bytes(limits.MailBody))
	}
	return nil
}

// checkAttachments refuses attachments without a name or with the same name, one larger than
// limits.Attachment, and more than limits.Attachments together.
func checkAttachments(as []Attachment) error {
	seen := map[string]bool{}
	total := 0
	for _, a := range as {
		if a.Name == "" {
			return errors.New("an attachment has an empty name")
		}
		if seen[a.Name] {
			return fmt.Errorf("two attachments are named %q", a.Name)
		}
		seen[a.Name] = true
		if len(a.Content) > limits.Attachment {
			return fmt.Errorf("attachment %q: %d bytes is over the %s limit of an attachment", a.Name, len(a.Content), limits.Bytes(limits.Attachment))
		}
		if total += len(a.Content); total > limits.Attachments {
			return fmt.Errorf("the attachments are over the %s limit of the attachments of one message together", limits.Bytes(limits.Attachments))
		}
	}
	return nil
}

// cleanLabels drops repeated labels, keeping the first of each.
func cleanLabels(ls []string) ([]string, error) {
	out := make([]string, 0, len(ls))
	for _, l := range ls {
		if l == "" {
			return nil, errors.New("empty label")
		}
		if !slices.Contains(out, l) {
			out = append(out, l)
		}
	}
	return out, nil
}

// Address returns the mailbox owner's address ("me@example.com" unless set).
func (mb *Mail) Address() string { return mb.mail.address }

// SetAddress changes the mailbox owner's address.
func (mb *Mail) SetAddress(a string) error {
	s := (*State)(mb)
	if s.frozen {
		return ErrFrozen
	}
	if err := checkAddress("address", a); err != nil {
		return err
	}
	_ = s.begin()
	s.mailw().address = a
	return nil
}

// Delivery is a message put into the mailbox by a script.
type Delivery struct {
	Sender, Subject, Body string
	To                    []string // nil: [Address()]
	Cc                    []string
	Date                  string // "": the clock's now
	Folder                string // "": "inbox"
	Attachments           []Attachment
	Read                  bool
	Labels                []string
	InReplyTo             string // joins the parent's thread when the parent exists
}

// add stores a new message, giving it the next id. m.ID and m.Thread are set here; m.Thread is
// kept when not empty.
func (s *State) addMessage(m Message, t time.Time) string {
	_ = s.begin()
	mail := s.mailw()
	mail.next++
	n := mail.next
	m.ID = "m" + strconv.Itoa(n)
	if m.Thread == "" {
		m.Thread = m.ID
	}
	mail.put(s.owner(), newMsgEntry(m, t, n))
	return m.ID
}

func (s *State) now() (string, time.Time) {
	t := s.clock.Truncate(time.Second)
	return t.Format(timefmt.Layout), t
}

// Deliver puts a message into the mailbox and returns its id. Deliver, Send, Reply and Forward
// refuse a body over limits.MailBody, an attachment over limits.Attachment and attachments over
// limits.Attachments together.
func (mb *Mail) Deliver(d Delivery) (string, error) {
	s := (*State)(mb)
	if s.frozen {
		return "", ErrFrozen
	}
	if err := checkAddress("sender", d.Sender); err != nil {
		return "", err
	}
	to := d.To
	if to == nil {
		to = []string{s.mail.address}
	}
	if err := checkMessage(to, d.Cc, d.Body, d.Attachments); err != nil {
		return "", err
	}
	labels, err := cleanLabels(d.Labels)
	if err != nil {
		return "", err
	}
	var date string
	var t time.Time
	if d.Date == "" {
		date, t = s.now()
	} else if date, t, err = timefmt.Normalize(d.Date); err != nil {
		return "", fmt.Errorf("date: %v", err)
	}
	folder := d.Folder
	if folder == "" {
		folder = "inbox"
	}
	m := Message{
		Sender: d.Sender, To: slices.Clone(to), Cc: slices.Clone(d.Cc), Subject: d.Subject,
		Body: d.Body, Date: date, Folder: folder, Read: d.Read, Labels: labels,
		InReplyTo: d.InReplyTo, Attachments: slices.Clone(d.Attachments),
	}
	if m.Cc == nil {
		m.Cc = []string{}
	}
	if m.Attachments == nil {
		m.Attachments = []Attachment{}
	}
	if p, ok := s.mail.byID.Get(d.InReplyTo); ok && d.InReplyTo != "" {
		m.Thread = p.m.Thread
	}
	id := s.addMessage(m, t)
	e, _ := s.mail.byID.Get(id)
	s.record(Action{Kind: KindMessage, Op: "deliver", Key: id, after: e})
	return id, nil
}

// Get returns a copy of message id.
func (mb *Mail) Get(id string) (Message, bool) {
	e, ok := mb.mail.byID.Get(id)
	if !ok {
		return Message{}, false
	}
	return e.m.clone(), true
}

func (mb *Mail) entry(id string) (*msgEntry, error) {
	e, ok := mb.mail.byID.Get(id)
	if !ok {
		return nil, fmt.Errorf("no message %s", id)
	}
	return e, nil
}

// Filter selects messages. Empty strings and a nil Unread select everything.
type Filter struct {
	Folder  string // exact
	Sender  string // exact, ignoring case
	To      string // an address in to or cc, exact, ignoring case
	Subject string // substring, ignoring case
	Label   string // has this label
	Unread  *bool  // true: unread only; false: read only
	Text    string // a substring of the sender, the subject or the body, ignoring case
}

func (f Filter) match(m *Message) bool {
	if f.Folder != "" && m.Folder != f.Folder {
		return false
	}
	if f.Sender != "" && !strings.EqualFold(m.Sender, f.Sender) {
		return false
	}
	if f.To != "" && !containsFold(m.To, f.To) && !containsFold(m.Cc, f.To) {
		return false
	}
	if f.Subject != "" && !strings.Contains(strings.ToLower(m.Subject), strings.ToLower(f.Subject)) {
		return false
	}
	if f.Label != "" && !slices.Contains(m.Labels, f.Label) {
		return false
	}
	if f.Unread != nil && m.Read == *f.Unread {
		return false
	}
	if f.Text != "" {
		q := strings.ToLower(f.Text)
		if !strings.Contains(strings.ToLower(m.Sender), q) && !strings.Contains(strings.ToLower(m.Subject), q) &&
			!strings.Contains(strings.ToLower(m.Body), q) {
			return false
		}
	}
	return true
}

func containsFold(list []string, s string) bool {
	for _, x := range list {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}

// Messages returns copies of the messages that match f, oldest first: by date (as instants),
// then by the number in the id (m9 before m10).
func (mb *Mail) Messages(f Filter) []Message {
	return mb.Select(f, false, -1)
}

// Select returns copies of at most limit messages (all of them when limit is negative) that
// match f: the oldest first, or with newest the newest first (see Scan).
func (mb *Mail) Select(f Filter, newest bool, limit int) []Message {
	out := []Message{}
	if limit == 0 {
		return out
	}
	for m := range mb.Scan(f, newest) {
		if out = append(out, m.clone()); len(out) == limit {
			break
		}
	}
	return out
}

// Scan yields the messages that match f, the oldest first or with newest the newest first,
// without copying them: a message and its lists belong to the mailbox and must not be changed.
// It walks the messages of f.Folder (of every folder when it is "") in that order, so a caller
// that stops after a few pays for the messages it looked at, not for the size of the mailbox.
func (mb *Mail) Scan(f Filter, newest bool) iter.Seq[*Message] {
	return func(yield func(*Message) bool) {
		for e := range mb.mail.scan(f.Folder, newest) {
			if f.match(&e.m) && !yield(&e.m) {
				return
			}
		}
	}
}

// InFolder is the number of messages in folder ("": in every folder): O(log n).
func (mb *Mail) InFolder(folder string) int {
	if folder == "" {
		return mb.mail.byID.Len()
	}
	return mb.mail.index.Rank(folderEnd(folder)) - mb.mail.index.Rank(msgKey{folder: folder, sec: math.MinInt64})
}

// Folders returns the folders that hold at least one message, sorted.
func (mb *Mail) Folders() []string {
	return slices.AppendSeq([]string{}, mb.mail.folders())
}

// Send sends a new message from Address() and returns its id. It lands in folder "sent", read,
// dated now, and starts its own thread.
func (mb *Mail) Send(to, cc []string, subject, body string, att []Attachment) (string, error) {
	s := (*State)(mb)
	if s.frozen {
		return "", ErrFrozen
	}
	if len(to) == 0 {
		return "", errors.New("to: at least one recipient is needed")
	}
	return s.send(Message{To: to, Cc: cc, Subject: subject, Body: body, Attachments: att})
}

// send stores m as sent mail: sender, folder, read flag and date are filled in here.
func (s *State) send(m Message) (string, error) {
	if err := checkMessage(m.To, m.Cc, m.Body, m.Attachments); err != nil {
		return "", err
	}
	m.To = slices.Clone(m.To)
	m.Cc = slices.Clone(m.Cc)
	if m.Cc == nil {
		m.Cc = []string{}
	}
	m.Attachments = slices.Clone(m.Attachments)
	if m.Attachments == nil {
		m.Attachments = []Attachment{}
	}
	m.Labels = []string{}
	m.Sender = s.mail.address
	m.Folder = "sent"
	m.Read = true
	var t time.Time
	m.Date, t = s.now()
	id := s.addMessage(m, t)
	e, _ := s.mail.byID.Get(id)
	s.record(Action{Kind: KindMessage, Op: "send", Key: id, after: e})
	return id, nil
}

// Reply answers message id and returns the reply's id. The reply goes to the original sender
// (to the original's recipients when the original is our own mail); with replyAll its cc holds
// the original to and cc without our address and without anyone already in to (first
// occurrence kept, case ignored); the addresses of extraCc are copied too (after those, without
// anyone already in to or cc). The subject gets "Re: " unless it already starts with "Re:"
// (any case). The reply joins the original's thread, sets in_reply_to, and holds only body: the
// original is not quoted, and it is left as it was.
func (mb *Mail) Reply(id, body string, replyAll bool, extraCc []string, att []Attachment) (string, error) {
	s := (*State)(mb)
	if s.frozen {
		return "", ErrFrozen
	}
	e, err := mb.entry(id)
	if err != nil {
		return "", err
	}
	orig := &e.m
	me := s.mail.address
	var to, cc []string
	if strings.EqualFold(orig.Sender, me) {
		to = dedupeFold(nil, orig.To, nil)
		if replyAll {
			cc = dedupeFold(to, orig.Cc, []string{me})
		}
	} else {
		to = []string{orig.Sender}
		if replyAll {
			cc = dedupeFold(to, append(slices.Clone(orig.To), orig.Cc...), []string{me})
		}
	}
	if len(to) == 0 {
		return "", fmt.Errorf("message %s has no one to reply to", id)
	}
	if len(extraCc) > 0 {
		if cc == nil {
			cc = []string{}
		}
		cc = append(cc, dedupeFold(append(slices.Clone(to), cc...), extraCc, nil)...)
	}
	subject := orig.Subject
	if !hasPrefixFold(subject, "re:") {
		subject = "Re: " + subject
	}
	return s.send(Message{To: to, Cc: cc, Subject: subject, Body: body, Attachments: att,
		Thread: orig.Thread, InReplyTo: orig.ID})
}

// dedupeFold returns the addresses of add that are not in have or skip, nor repeated (case
// ignored), in order.
func dedupeFold(have, add, skip []string) []string {
	out := []string{}
	for _, a := range add {
		if containsFold(have, a) || containsFold(skip, a) || containsFold(out, a) {
			continue
		}
		out = append(out, a)
	}
	return out
}

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

// Forward sends message id on to new recipients and returns the new id. The subject gets
// "Fwd: " unless it already starts with "Fwd:" (any case); the body is body, a blank line when
// body is not empty, and the quoted original:
//
//	---------- Forwarded message ----------
//	From: <sender>
//	Date: <date>
//	Subject: <subject>
//	To: <to, comma separated>
//	Cc: <cc>            (only when the original had cc)
//
//	<original body>
//
// The original's attachments are kept. A forward starts a new thread.
func (mb *Mail) Forward(id string, to, cc []string, body string) (string, error) {
	s := (*State)(mb)
	if s.frozen {
		return "", ErrFrozen
	}
	e, err := mb.entry(id)
	if err != nil {
		return "", err
	}
	if len(to) == 0 {
		return "", errors.New("to: at least one recipient is needed")
	}
	orig := &e.m
	subject := orig.Subject
	if !hasPrefixFold(subject, "fwd:") {
		subject = "Fwd: " + subject
	}
	var b strings.Builder
	if body != "" {
		b.WriteString(body)
		b.WriteString("\n\n")
	}
	b.WriteString("---------- Forwarded message ----------\n")
	fmt.Fprintf(&b, "From: %s\nDate: %s\nSubject: %s\nTo: %s\n", orig.Sender, orig.Date, orig.Subject, strings.Join(orig.To, ", "))
	if len(orig.Cc) > 0 {
		fmt.Fprintf(&b, "Cc: %s\n", strings.Join(orig.Cc, ", "))
	}
	b.WriteString("\n")
	b.WriteString(orig.Body)
	if b.Len() > limits.MailBody {
		return "", fmt.Errorf("body: the forward (the note and the quoted original) would be %d bytes, over the %s limit of a mail body", b.Len(), limits.Bytes(limits.MailBody))
	}
	return s.send(Message{To: to, Cc: cc, Subject: subject, Body: b.String(), Attachments: orig.Attachments})
}

// replaceMessage stores a changed copy of an existing message (nothing when it is the same).
// op names the action in the history ("read" is turned into "mark" when more than the read
// flag changed).
func (s *State) replaceMessage(old *msgEntry, m Message, op string) {
	ne := newMsgEntry(m, old.t, old.num)
	if ne.sum == old.sum {
		return
	}
	if op == "read" && !slices.Equal(old.m.Labels, m.Labels) {
		op = "mark"
	}
	_ = s.begin()
	s.mailw().put(s.owner(), ne)
	s.record(Action{Kind: KindMessage, Op: op, Key: m.ID, before: old, after: ne})
}

// Mark sets the read flag (when read is not nil) and replaces the labels (when labels is not
// nil) of message id, and returns the message.
func (mb *Mail) Mark(id string, read *bool, labels []string) (Message, error) {
	s := (*State)(mb)
	if s.frozen {
		return Message{}, ErrFrozen
	}
	e, err := mb.entry(id)
	if err != nil {
		return Message{}, err
	}
	m := e.m.clone()
	if read != nil {
		m.Read = *read
	}
	if labels != nil {
		if m.Labels, err = cleanLabels(labels); err != nil {
			return Message{}, err
		}
	}
	op := "mark"
	if labels == nil {
		op = "read"
	}
	s.replaceMessage(e, m, op)
	return m.clone(), nil
}

// Move puts message id into folder (which then exists) and returns the message.
func (mb *Mail) Move(id, folder string) (Message, error) {
	s := (*State)(mb)
	if s.frozen {
		return Message{}, ErrFrozen
	}
	e, err := mb.entry(id)
	if err != nil {
		return Message{}, err
	}
	if strings.TrimSpace(folder) == "" {
		return Message{}, errors.New("folder: empty name")
	}
	m := e.m.clone()
	m.Folder = folder
	s.replaceMessage(e, m, "move")
	return m.clone(), nil
}

// Attachment returns the content of the attachment called name of message id.
func (mb *Mail) Attachment(id, name string) (string, error) {
	e, err := mb.entry(id)
	if err != nil {
		return "", err
	}
	for _, a := range e.m.Attachments {
		if a.Name == name {
			return a.Content, nil
		}
	}
	if len(e.m.Attachments) == 0 {
		return "", fmt.Errorf("message %s has no attachments", id)
	}
	return "", fmt.Errorf("message %s has no attachment %q (it has %s)", id, name, quoteList(e.m.AttachmentNames()))
}

func quoteList(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = strconv.Quote(s)
	}
	return strings.Join(q, ", ")
}
