// The records shards' configuration (Shared/Runtime/Shards.swift): the count and its
// limits, instance names and their settings, which shard a process is and which a host
// runs; one shard is exactly the names of before.
import Foundation
import Runtime
import Testing
import Wire

@Suite struct ShardConfigurationTests {
    @Test func oneShardIsTheStackOfBefore() throws {
        let stack = try StackConfiguration.scratch("/tmp/lbs-one")
        #expect(stack.recordsShards == 1)
        #expect(stack.recordsInstances == ["records"])
        #expect(stack.instances == StackConfiguration.services)
        #expect(stack.databasePath("records") == "/tmp/lbs-one/data/records.sqlite")
        #expect(try stack.ownRecordsShard() == 1)
    }

    @Test func moreShardsHaveInstancesWithSettingsOfTheirOwn() throws {
        let stack = try StackConfiguration.scratch(
            "/tmp/lbs-two",
            extra: ["LOGBOOK_RECORDS_SHARDS": "3", "LOGBOOK_RECORDS_2_ENDPOINT": "tcp://10.0.0.2:7111", "LOGBOOK_RECORDS_SHARD": "3"])
        #expect(stack.recordsInstances == ["records", "records-2", "records-3"])
        #expect(stack.instances == ["auth", "records", "records-2", "records-3", "weather-fetcher", "analytics", "store"])
        #expect(stack.endpoint("records-2") == "tcp://10.0.0.2:7111")
        #expect(stack.endpoint("records-3") == "ipc:///tmp/lbs-two/run/records-3.sock")
        #expect(stack.databasePath("records-3") == "/tmp/lbs-two/data/records-3.sqlite")
        #expect(try stack.ownRecordsShard() == 3)
        #expect(stack.environment(for: "records-2")[StackConfiguration.recordsShardSetting] == "2")
        #expect(try stack.localRecordsShards() == [1, 2, 3])
    }

    @Test func instanceNames() {
        #expect(StackConfiguration.shard(of: "records") == 1)
        #expect(StackConfiguration.shard(of: "records-2") == 2)
        for name in ["records-1", "records-02", "records-", "records-x", "auth", "records2"] {
            #expect(StackConfiguration.shard(of: name) == nil, "\(name)")
        }
        #expect(StackConfiguration.executable(of: "records-7") == "records")
        #expect(StackConfiguration.executable(of: "store") == "store")
    }

    @Test func badValuesAreRefusedNamingTheSetting() throws {
        for bad in ["0", "65", "two", "-1", "1.5"] {
            #expect(throws: ConfigurationError.self) {
                try StackConfiguration.scratch("/tmp/lbs-bad", extra: ["LOGBOOK_RECORDS_SHARDS": bad])
            }
        }
        let stack = try StackConfiguration.scratch(
            "/tmp/lbs-bad", extra: ["LOGBOOK_RECORDS_SHARDS": "2", "LOGBOOK_RECORDS_SHARD": "3", "LOGBOOK_RECORDS_LOCAL_SHARDS": "1,5"])
        let shard = #expect(throws: ConfigurationError.self) { try stack.ownRecordsShard() }
        #expect(shard?.description.contains("LOGBOOK_RECORDS_SHARD") == true)
        let local = #expect(throws: ConfigurationError.self) { try stack.localRecordsShards() }
        #expect(local?.description.contains("LOGBOOK_RECORDS_LOCAL_SHARDS") == true)
        let none = try StackConfiguration.scratch("/tmp/lbs-bad", extra: ["LOGBOOK_RECORDS_SHARDS": "2", "LOGBOOK_RECORDS_LOCAL_SHARDS": "none"])
        #expect(try none.localRecordsShards().isEmpty)
    }

    @Test func theRedirectNamesTheShardAndIsRecognised() {
        let error = ShardRedirect.error(userShard: 2, here: 1)
        #expect(error.code == .failedPrecondition)
        #expect(ShardRedirect.target(error) == 2)
        #expect(ShardRedirect.target(ServiceError(.failedPrecondition, "other", details: ["shard": 2])) == nil)
        #expect(ShardRedirect.target(ServiceError(.unavailable, "x")) == nil)
    }
}
