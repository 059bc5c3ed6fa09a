// Package policy is a policy object as the rules judge it: its identity, its target
// references (decoded once, with their field paths), its spec as generic JSON read through
// its kind row (the blocks of bare rules, defaults and overrides, and each block's
// strategy), and the references it makes to other objects. Policy carries no index or
// storage state; Compact returns the memory-compact copy a snapshot keeps.
package policy
