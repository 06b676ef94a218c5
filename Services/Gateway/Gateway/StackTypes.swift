// Where the service executables are (Services/Gateway/StackSupervisor/Executables.swift),
// named here for every command that asks whether a service is installed.
import StackSupervisor

typealias Executables = StackSupervisor.Executables
