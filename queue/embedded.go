package queue

import (
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// Embedded starts a NATS server with JetStream inside this process, storing under dir and
// listening on 127.0.0.1 at a port the system picks. It returns the URL to Open and a function
// that shuts the server down and waits for it. It is for `--queue embedded` and tests: workers in
// other processes on the same machine can connect to the URL.
func Embedded(dir string) (url string, stop func(), err error) {
	return embedded(dir, EmbeddedMaxPayload)
}

// EmbeddedMaxPayload is the largest message the embedded server takes. A NATS server takes 1 MiB
// by default (its max_payload); bodies and results larger than a message go through the blob
// store in chunks that fit, whatever the limit.
const EmbeddedMaxPayload = 32 << 20

// EmbeddedWith is Embedded with a server that takes messages of at most maxPayload bytes (its
// max_payload), for tests of what does not fit in a message.
func EmbeddedWith(dir string, maxPayload int32) (url string, stop func(), err error) {
	return embedded(dir, maxPayload)
}

func embedded(dir string, maxPayload int32) (url string, stop func(), err error) {
	if dir == "" {
		return "", nil, errors.New("embedded queue: no store folder")
	}
	s, err := server.NewServer(&server.Options{
		ServerName: "coworkenv",
		Host:       "127.0.0.1",
		Port:       -1, // any free port
		JetStream:  true,
		StoreDir:   dir,
		NoLog:      true,
		NoSigs:     true,
		MaxPayload: maxPayload,
	})
	if err != nil {
		return "", nil, fmt.Errorf("embedded queue: %w", err)
	}
	s.Start()
	if !s.ReadyForConnections(30 * time.Second) {
		s.Shutdown()
		s.WaitForShutdown()
		return "", nil, errors.New("embedded queue: the server did not start")
	}
	stop = func() {
		s.Shutdown()
		s.WaitForShutdown()
	}
	return s.ClientURL(), stop, nil
}
