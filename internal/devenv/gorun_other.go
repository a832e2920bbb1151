//go:build !linux

package devenv

// FollowGoRun does nothing outside Linux, which alone has a parent-death
// signal.
func FollowGoRun() {}
