// Encoding of the lease text object (a TextObject like heads and commit records).
#include "remote/lease_format.hpp"

#include "remote/text_object.hpp"

namespace differential {

std::string LeaseKey(const std::string &database, const std::string &branch) {
	return "leases/" + database + "/" + branch;
}

std::string EncodeLease(const LeaseRecord &lease) {
	TextObject out("lease");
	out.Add("database", lease.database);
	out.Add("branch", lease.branch);
	out.Add("holder", lease.holder);
	out.Add("duration_ms", std::to_string(lease.duration_ms));
	out.Add("renewal", std::to_string(lease.renewal));
	out.Add("ship_wal", lease.ship_wal);
	out.Add("ship_interval", std::to_string(lease.ship_interval));
	return out.text;
}

bool DecodeLease(const std::string &text, LeaseRecord &out, std::string &why) {
	ParsedText parsed;
	if (!parsed.Parse(text, "lease", why) || !parsed.Text("database", out.database, why) ||
	    !parsed.Text("branch", out.branch, why) || !parsed.Text("holder", out.holder, why) ||
	    !parsed.Number("duration_ms", out.duration_ms, why) || !parsed.Number("renewal", out.renewal, why) ||
	    !parsed.Text("ship_wal", out.ship_wal, why) || !parsed.Number("ship_interval", out.ship_interval, why)) {
		return false;
	}
	if (out.duration_ms <= 0 || (out.ship_wal != "sync" && out.ship_wal != "async")) {
		why = "duration_ms must be positive and ship_wal sync or async";
		return false;
	}
	return true;
}

} // namespace differential
