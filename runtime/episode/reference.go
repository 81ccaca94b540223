package episode

// Reference documents `ep` (verifiers and user functions) and `agent` (solutions), from the
// tables that define their members.
var Reference = append(epMembers.Funcs(), agentMembers.Funcs()...)
