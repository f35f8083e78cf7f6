import LaunchServicesTesting
import Testing

@Suite struct KitLinksTests {
    @Test func schemeRulesAreReexported() throws {
        #expect(try URLScheme(validating: "Todo").normalized == "todo")
    }
}
