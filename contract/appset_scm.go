package contract

// ErrSCMProvider: a pullRequest or scmProvider generator's provider failed
// (its API answered an error, or what it does not document). The set keeps
// its apps, says why in its conditions, and lists again at its next poll.
const ErrSCMProvider = "SCMProviderError"
