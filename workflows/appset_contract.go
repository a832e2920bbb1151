package workflows

import (
	"time"
)

// defaultAppSetPoll is how often a set runs its generators without a
// refresh, as Argo CD's controller requeues a set (3 minutes).
const defaultAppSetPoll = 3 * time.Minute
