package main

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
)

// workerIdentity is the SDK's default identity (pid@host@) with a start id
// after it. The control worker tells a region worker's restart by the
// identities polling the region's queue (an idle app then compares, since
// the new worker's live cache knows nothing of it), and a worker restarted
// in the same pod often has the same pid and host.
func workerIdentity() string {
	host, _ := os.Hostname()
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return fmt.Sprintf("%d@%s@%s", os.Getpid(), host, hex.EncodeToString(b))
}
