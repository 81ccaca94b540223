package queue

import (
	"errors"
	"fmt"
	"strconv"
	"unicode"

	"github.com/nats-io/nats.go"
)

// The messages on the server. A job's or a result's body is the message's data, as it is (no
// encoding: a trace in a result is its JSON Lines); the rest is in headers, so that a reader
// that needs only those (Status) reads no body:
//
//	job:     Coworkenv-Job-Id, Coworkenv-Kind, Coworkenv-Attempt (when not 0); data: the body
//	result:  Coworkenv-Job-Id, Coworkenv-Attempt (when not 0), Coworkenv-Ok ("true" or "false"),
//	         Coworkenv-Deliveries, Coworkenv-Blob (when the data is in the blob store); data: the
//	         body when OK, the error when not (none when Coworkenv-Blob names them)
const (
	hdrJobID      = "Coworkenv-Job-Id"
	hdrKind       = "Coworkenv-Kind"
	hdrAttempt    = "Coworkenv-Attempt"
	hdrOK         = "Coworkenv-Ok"
	hdrDeliveries = "Coworkenv-Deliveries"
)

// maxHeaderValue bounds a job's ID and kind, which travel in headers.
const maxHeaderValue = 1024

// checkHeaderValue checks that v can be a header's value: printable, on one line, not too long.
func checkHeaderValue(what, v string) error {
	if len(v) > maxHeaderValue {
		return fmt.Errorf("the job's %s is longer than %d bytes", what, maxHeaderValue)
	}
	for _, r := range v {
		if r == unicode.ReplacementChar || !unicode.IsPrint(r) {
			return fmt.Errorf("the job's %s %q: use printable characters, without line breaks or tabs", what, v)
		}
	}
	return nil
}

func jobMsg(subject string, j Job) (*nats.Msg, error) {
	if j.ID == "" {
		return nil, errors.New("the job has no ID")
	}
	if err := checkHeaderValue("ID", j.ID); err != nil {
		return nil, err
	}
	if err := checkHeaderValue("kind", j.Kind); err != nil {
		return nil, err
	}
	m := nats.NewMsg(subject)
	m.Header.Set(hdrJobID, j.ID)
	m.Header.Set(hdrKind, j.Kind)
	if j.Attempt != 0 {
		m.Header.Set(hdrAttempt, strconv.Itoa(j.Attempt))
	}
	m.Data = j.Body
	return m, nil
}

func decodeJob(h nats.Header, data []byte) (Job, error) {
	j := Job{ID: h.Get(hdrJobID), Kind: h.Get(hdrKind), Body: data}
	if j.ID == "" {
		return j, errors.New("a message without a job ID")
	}
	var err error
	j.Attempt, err = attemptOf(h)
	return j, err
}

func resultMsg(subject string, r Result) *nats.Msg {
	m := nats.NewMsg(subject)
	m.Header.Set(hdrJobID, r.JobID)
	if r.Attempt != 0 {
		m.Header.Set(hdrAttempt, strconv.Itoa(r.Attempt))
	}
	m.Header.Set(hdrOK, strconv.FormatBool(r.OK))
	m.Header.Set(hdrDeliveries, strconv.Itoa(r.Deliveries))
	if r.OK {
		m.Data = r.Body
	} else {
		m.Data = []byte(r.Error)
	}
	return m
}

// decodeResult reads a result; with data nil (a reader of headers only) its body and error are
// empty.
func decodeResult(h nats.Header, data []byte) (Result, error) {
	r := Result{JobID: h.Get(hdrJobID)}
	if r.JobID == "" {
		return r, errors.New("a message without a job ID")
	}
	var err error
	if r.Attempt, err = attemptOf(h); err != nil {
		return r, err
	}
	if r.OK, err = strconv.ParseBool(h.Get(hdrOK)); err != nil {
		return r, fmt.Errorf("result of job %s: %s %q", r.JobID, hdrOK, h.Get(hdrOK))
	}
	if r.Deliveries, err = strconv.Atoi(h.Get(hdrDeliveries)); err != nil {
		return r, fmt.Errorf("result of job %s: %s %q", r.JobID, hdrDeliveries, h.Get(hdrDeliveries))
	}
	if r.blob = h.Get(hdrBlob); r.blob != "" {
		return r, nil
	}
	r.setData(data)
	return r, nil
}

// setData sets the body, or the error, from the message's data.
func (r *Result) setData(data []byte) {
	if r.OK {
		r.Body = data
	} else {
		r.Error = string(data)
	}
}

func attemptOf(h nats.Header) (int, error) {
	v := h.Get(hdrAttempt)
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%s %q is not an attempt", hdrAttempt, v)
	}
	return n, nil
}
