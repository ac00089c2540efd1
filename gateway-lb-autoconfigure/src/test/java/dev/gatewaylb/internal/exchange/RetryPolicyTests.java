package dev.gatewaylb.internal.exchange;

import java.util.Set;

import dev.gatewaylb.internal.settings.RetrySettings;
import dev.gatewaylb.internal.upstream.Outcome.Kind;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import org.springframework.http.HttpMethod;
import org.springframework.mock.http.server.reactive.MockServerHttpRequest;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The retry decision matrix: outcome x status x replayable x retries spent.
 */
class RetryPolicyTests {

	private static final RetrySettings ONE_RETRY = new RetrySettings(1, Set.of(502, 503, 504), 20, 10);

	@ParameterizedTest(name = "{0} {1} replayable={2} after {3} retries -> {4}")
	@CsvSource(delimiter = '|', textBlock = """
			CONNECT_FAILED  | 0   | false | 0 | true
			CONNECT_FAILED  | 0   | true  | 0 | true
			CONNECT_FAILED  | 0   | true  | 1 | false
			CONNECTION_LOST | 0   | true  | 0 | true
			CONNECTION_LOST | 0   | false | 0 | false
			SERVER_ERROR    | 503 | true  | 0 | true
			SERVER_ERROR    | 503 | false | 0 | false
			SERVER_ERROR    | 500 | true  | 0 | false
			SERVER_ERROR    | 503 | true  | 1 | false
			SUCCESS         | 404 | true  | 0 | false
			TIMEOUT         | 0   | true  | 0 | false
			SATURATED       | 0   | true  | 0 | false
			BODY_FAILED     | 0   | true  | 0 | false
			CLIENT_GONE     | 0   | true  | 0 | false
			CANCELLED       | 0   | true  | 0 | false
			NOT_UPSTREAM    | 0   | true  | 0 | false
			REQUEST_BODY_IDLE | 0 | true  | 0 | false
			REQUEST_BODY_IDLE | 0 | false | 0 | false
			""")
	void retriesWhatIsSafeToSendAgainWithinTheAttempts(Kind outcome, int status, boolean replayable, int retries,
			boolean expected) {
		assertThat(RetryPolicy.shouldRetry(outcome, status, replayable, retries, ONE_RETRY)).isEqualTo(expected);
	}

	@ParameterizedTest(name = "{0} {1} -> {2}")
	@CsvSource(delimiter = '|', textBlock = """
			GET     |        | true
			HEAD    |        | true
			OPTIONS |        | true
			PUT     |        | true
			DELETE  |        | true
			POST    |        | false
			PATCH   |        | false
			GET     | 12     | false
			PUT     | 0      | true
			GET     | chunked | false
			""")
	void replaysIdempotentRequestsWithoutABody(String method, String body, boolean expected) {
		MockServerHttpRequest.BaseBuilder<?> request = MockServerHttpRequest.method(HttpMethod.valueOf(method), "/");
		if ("chunked".equals(body)) {
			request.header("Transfer-Encoding", "chunked");
		}
		else if (body != null) {
			request.header("Content-Length", body);
		}
		assertThat(RetryPolicy.replayable(request.build())).isEqualTo(expected);
	}

}
