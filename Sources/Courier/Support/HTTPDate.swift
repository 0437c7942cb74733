#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Parsing and formatting of HTTP timestamps (RFC 9110 §5.6.7).
///
/// Hand-written over UTF-8 bytes instead of `DateFormatter` because formatters are slow, not `Sendable`, and
/// locale-sensitive (the protocol format is always English month/day names in GMT). All arithmetic is on `Int`
/// with bounded inputs (at most 4 digits per field), so no input can overflow or trap.
enum HTTPDate {
    /// Longest input worth looking at; the longest valid form (RFC 850 with "Wednesday") is 33 bytes, so anything
    /// much longer is rejected up front without copying it.
    private static let maximumLength = 64

    /// Seconds since 1970 of 0001-01-01T00:00:00Z and 9999-12-31T23:59:59Z: the range IMF-fixdate's 4-digit year
    /// can express, used to clamp `format(_:)`.
    private static let formattableRange: ClosedRange<Double> = -62_135_596_800...253_402_300_799

    /// Full weekday names for RFC 850 dates, Sunday first to match `weekday(ofDay:)`.
    private static let longDayNames: [[UInt8]] = [
        "Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday",
    ].map { Array($0.utf8) }

    /// Abbreviated weekday names used by IMF-fixdate and asctime, Sunday first.
    private static let shortDayNames: [[UInt8]] = longDayNames.map { Array($0.prefix(3)) }

    /// Abbreviated month names, January first.
    private static let monthNames: [[UInt8]] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ].map { Array($0.utf8) }

    /// Broken-down UTC timestamp as read from the wire, before validation.
    private struct Components {
        /// Proleptic Gregorian date; month is 1-based.
        var year: Int, month: Int, day: Int
        /// Time of day as read; `second` may be 60 (leap second).
        var hour: Int, minute: Int, second: Int
    }

    /// Parses an HTTP date in any of the three formats RFC 9110 §5.6.7 requires recipients to accept:
    /// IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), RFC 850 (`Sunday, 06-Nov-94 08:49:37 GMT`) and
    /// asctime (`Sun Nov  6 08:49:37 1994`).
    ///
    /// Names and `GMT` are matched case-insensitively (lenient, although the grammar is case-sensitive).
    /// The weekday must be a real weekday name but is not checked against the date: the weekday is redundant and
    /// RFC 9110 lets recipients ignore it, and real servers occasionally get it wrong. A leap second (`:60`) is
    /// clamped to `:59` because `Date` cannot represent it. Leading/trailing whitespace is ignored; anything else
    /// that does not match exactly yields `nil`.
    /// - Parameters:
    ///   - text: The field value, e.g. of `Date`, `Expires` or `Last-Modified`.
    ///   - now: Reference time for resolving RFC 850 two-digit years: the injected date (such as the response
    ///     time), never the real clock, so that parsing is as reproducible as everything else that reads time.
    /// - Returns: The instant, or `nil` if `text` is not a valid HTTP date.
    static func parse(_ text: some StringProtocol, now: Date) -> Date? {
        guard text.utf8.count <= maximumLength else { return nil }
        var string = String(text)
        return string.withUTF8 { parse(bytes: $0, now: now) }
    }

    /// Formats `date` as IMF-fixdate, the only format RFC 9110 §5.6.7 allows senders to generate.
    ///
    /// Fractional seconds are truncated toward the past; dates outside years 0001...9999 (which the 4-digit year
    /// cannot express) are clamped to that range, and a NaN interval formats as the Unix epoch.
    /// - Parameter date: The instant to format.
    /// - Returns: For example `Sun, 06 Nov 1994 08:49:37 GMT`.
    static func format(_ date: Date) -> String {
        let seconds = wholeSeconds(date, in: formattableRange)
        let days = floorDivide(seconds, 86_400)
        let secondOfDay = seconds - days * 86_400
        let (year, month, day) = civil(fromDays: days)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(29)
        bytes += shortDayNames[weekday(ofDay: days)]
        appendDigits(day, width: 2, after: ", ", to: &bytes)
        bytes.append(UInt8(ascii: " "))
        bytes += monthNames[month - 1]
        appendDigits(year, width: 4, after: " ", to: &bytes)
        appendDigits(secondOfDay / 3600, width: 2, after: " ", to: &bytes)
        appendDigits(secondOfDay / 60 % 60, width: 2, after: ":", to: &bytes)
        appendDigits(secondOfDay % 60, width: 2, after: ":", to: &bytes)
        bytes.append(contentsOf: " GMT".utf8)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Dispatches on the shape of the leading weekday name to one of the three grammars.
    private static func parse(bytes: UnsafeBufferPointer<UInt8>, now: Date) -> Date? {
        if let date = imfFixdate(bytes) { return date }
        var lower = 0
        var upper = bytes.count
        while lower < upper, isWhitespace(bytes[lower]) { lower += 1 }
        while upper > lower, isWhitespace(bytes[upper - 1]) { upper -= 1 }
        var cursor = Cursor(bytes: UnsafeBufferPointer(rebasing: bytes[lower..<upper]))
        let name = cursor.letters()
        let components: Components?
        if cursor.consume(","), cursor.consume(" ") {
            if name.count == 3 {
                guard isShortDayName(name) else { return nil }
                components = parseIMFFixdate(&cursor)
            } else {
                guard index(of: name, in: longDayNames) != nil else { return nil }
                components = parseRFC850(&cursor, now: now)
            }
        } else if name.count == 3, cursor.consume(" ") {
            guard isShortDayName(name) else { return nil }
            components = parseAsctime(&cursor)
        } else {
            return nil
        }
        guard let components, cursor.isAtEnd else { return nil }
        return date(from: components)
    }

    /// The common case, an IMF-fixdate of exactly 29 bytes with nothing around it (what servers send, RFC 9110
    /// §5.6.7), read at fixed offsets: `Sun, 06 Nov 1994 08:49:37 GMT`. `nil` for anything else, which the general
    /// parser then reads (and may still accept, or reject); where this accepts, it gives what the general parser
    /// gives. Reading the fields through the cursor cost about 600 instructions a date, and a stored response has two
    /// or three dates.
    private static func imfFixdate(_ bytes: UnsafeBufferPointer<UInt8>) -> Date? {
        guard bytes.count == 29, bytes[3] == UInt8(ascii: ","), bytes[4] == UInt8(ascii: " "),
            bytes[7] == UInt8(ascii: " "), bytes[11] == UInt8(ascii: " "), bytes[16] == UInt8(ascii: " "),
            bytes[19] == UInt8(ascii: ":"), bytes[22] == UInt8(ascii: ":"), bytes[25] == UInt8(ascii: " "),
            isShortDayName(UnsafeBufferPointer(rebasing: bytes[0..<3])),
            let month = monthNumber(UnsafeBufferPointer(rebasing: bytes[8..<11])),
            bytes[26] | 0x20 == UInt8(ascii: "g"), bytes[27] | 0x20 == UInt8(ascii: "m"),
            bytes[28] | 0x20 == UInt8(ascii: "t"),
            let day = fixedDigits(bytes, 5, 2), let year = fixedDigits(bytes, 12, 4),
            let hour = fixedDigits(bytes, 17, 2), let minute = fixedDigits(bytes, 20, 2),
            let second = fixedDigits(bytes, 23, 2)
        else { return nil }
        return date(from: Components(year: year, month: month, day: day, hour: hour, minute: minute, second: second))
    }

    /// The value of the `count` ASCII digits at `offset` (at most 4, inside `bytes`), or `nil` if one is not a digit.
    @inline(__always)
    private static func fixedDigits(_ bytes: UnsafeBufferPointer<UInt8>, _ offset: Int, _ count: Int) -> Int? {
        var value = 0
        for index in offset..<(offset + count) {
            let digit = bytes[index] &- UInt8(ascii: "0")
            guard digit < 10 else { return nil }
            value = value * 10 + Int(digit)
        }
        return value
    }

    /// `date1 SP time-of-day SP GMT` where `date1 = day SP month SP year` (2, 3 and 4 characters).
    private static func parseIMFFixdate(_ cursor: inout Cursor) -> Components? {
        guard let day = cursor.digits(2), cursor.consume(" "), let month = cursor.month(), cursor.consume(" "),
            let year = cursor.digits(4), cursor.consume(" ")
        else { return nil }
        return parseTimeAndGMT(&cursor, year: year, month: month, day: day)
    }

    /// `date2 SP time-of-day SP GMT` where `date2 = day "-" month "-" 2DIGIT`.
    ///
    /// RFC 9110 §5.6.7: a two-digit year that "appears to be more than 50 years in the future" means "the most
    /// recent year in the past that had the same last two digits". The comparison is on the full timestamp against
    /// `now` plus 50 calendar years, so the boundary is exact rather than year-granular.
    private static func parseRFC850(_ cursor: inout Cursor, now: Date) -> Components? {
        guard let day = cursor.digits(2), cursor.consume("-"), let month = cursor.month(), cursor.consume("-"),
            let shortYear = cursor.digits(2), cursor.consume(" ")
        else { return nil }
        let nowSeconds = wholeSeconds(now, in: formattableRange)
        let nowDays = floorDivide(nowSeconds, 86_400)
        let (nowYear, nowMonth, nowDay) = civil(fromDays: nowDays)
        let year = floorDivide(nowYear, 100) * 100 + shortYear
        guard var time = parseTimeAndGMT(&cursor, year: year, month: month, day: day) else { return nil }
        let secondOfDay = time.hour * 3600 + time.minute * 60 + time.second
        let limit = (nowYear + 50, nowMonth, nowDay, nowSeconds - nowDays * 86_400)
        if (year, month, day, secondOfDay) > limit { time.year -= 100 }
        return time
    }

    /// `month SP day SP time-of-day SP year`, where `day` is 2 digits or a space followed by 1 digit.
    private static func parseAsctime(_ cursor: inout Cursor) -> Components? {
        guard let month = cursor.month(), cursor.consume(" ") else { return nil }
        let day = cursor.consume(" ") ? cursor.digits(1) : cursor.digits(2)
        guard let day, cursor.consume(" "), let time = parseTime(&cursor), cursor.consume(" "),
            let year = cursor.digits(4)
        else { return nil }
        return Components(year: year, month: month, day: day, hour: time.0, minute: time.1, second: time.2)
    }

    /// `time-of-day SP GMT`, shared by IMF-fixdate and RFC 850.
    private static func parseTimeAndGMT(_ cursor: inout Cursor, year: Int, month: Int, day: Int) -> Components? {
        guard let time = parseTime(&cursor), cursor.consume(" ") else { return nil }
        let zone = cursor.letters()
        guard zone.count == 3, zone[0] | 0x20 == UInt8(ascii: "g"), zone[1] | 0x20 == UInt8(ascii: "m"),
            zone[2] | 0x20 == UInt8(ascii: "t")
        else { return nil }
        return Components(year: year, month: month, day: day, hour: time.0, minute: time.1, second: time.2)
    }

    /// `hour ":" minute ":" second`, each exactly two digits. Range checks happen in `date(from:)`.
    private static func parseTime(_ cursor: inout Cursor) -> (Int, Int, Int)? {
        guard let hour = cursor.digits(2), cursor.consume(":"), let minute = cursor.digits(2), cursor.consume(":"),
            let second = cursor.digits(2)
        else { return nil }
        return (hour, minute, second)
    }

    /// Validates field ranges (including the real length of the month) and converts to a `Date`.
    private static func date(from components: Components) -> Date? {
        let c = components
        guard (1...12).contains(c.month), c.day >= 1, c.day <= daysInMonth(c.month, year: c.year),
            (0...23).contains(c.hour), (0...59).contains(c.minute), (0...60).contains(c.second)
        else { return nil }
        let days = self.days(fromCivil: c.year, c.month, c.day)
        let seconds = days * 86_400 + c.hour * 3600 + c.minute * 60 + min(c.second, 59)
        return Date(timeIntervalSince1970: TimeInterval(seconds))
    }

    /// Number of days in `month` of `year`, using the proleptic Gregorian leap-year rule.
    private static func daysInMonth(_ month: Int, year: Int) -> Int {
        switch month {
        case 2:
            let isLeap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
            return isLeap ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's `days_from_civil`).
    private static func days(fromCivil year: Int, _ month: Int, _ day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = floorDivide(y, 400)
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// Inverse of `days(fromCivil:_:_:)` (Howard Hinnant's `civil_from_days`).
    private static func civil(fromDays days: Int) -> (year: Int, month: Int, day: Int) {
        let z = days + 719_468
        let era = floorDivide(z, 146_097)
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shiftedMonth = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
        let month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    /// Weekday index (0 = Sunday) of a day count since 1970-01-01, which was a Thursday.
    private static func weekday(ofDay days: Int) -> Int {
        days - floorDivide(days + 4, 7) * 7 + 4
    }

    /// Seconds since 1970 of `date`, rounded down and clamped to `range` so the `Int` conversion cannot trap;
    /// NaN maps to 0.
    private static func wholeSeconds(_ date: Date, in range: ClosedRange<Double>) -> Int {
        let interval = date.timeIntervalSince1970
        return interval.isNaN ? 0 : Int(min(max(interval, range.lowerBound), range.upperBound).rounded(.down))
    }

    /// Integer division rounding toward negative infinity, needed for dates before 1970.
    private static func floorDivide(_ value: Int, _ divisor: Int) -> Int {
        let quotient = value / divisor
        return (value % divisor != 0 && (value < 0) != (divisor < 0)) ? quotient - 1 : quotient
    }

    /// Appends `separator`, then `value` as exactly `width` zero-padded decimal digits (callers guarantee it fits).
    private static func appendDigits(_ value: Int, width: Int, after separator: String, to bytes: inout [UInt8]) {
        bytes.append(contentsOf: separator.utf8)
        var divisor = 1
        for _ in 1..<width { divisor *= 10 }
        while divisor > 0 {
            bytes.append(UInt8(ascii: "0") + UInt8(value / divisor % 10))
            divisor /= 10
        }
    }

    /// Three ASCII letters folded to lower case and packed into one integer, so that a day or month name is matched by
    /// comparing integers; `nil` for a name of another length. (Searching the name tables cost about 600 instructions
    /// a date, and every stored response has two or three dates.)
    private static func packedLowercase(_ name: UnsafeBufferPointer<UInt8>) -> Int? {
        guard name.count == 3 else { return nil }
        return Int(name[0] | 0x20) << 16 | Int(name[1] | 0x20) << 8 | Int(name[2] | 0x20)
    }

    /// Whether `name` is an abbreviated weekday name, in any case.
    private static func isShortDayName(_ name: UnsafeBufferPointer<UInt8>) -> Bool {
        switch packedLowercase(name) {
        // "sun", "mon", "tue", "wed", "thu", "fri", "sat"
        case 0x73_756E, 0x6D_6F6E, 0x74_7565, 0x77_6564, 0x74_6875, 0x66_7269, 0x73_6174: true
        default: false
        }
    }

    /// The number (1...12) of the abbreviated month name `name`, in any case.
    private static func monthNumber(_ name: UnsafeBufferPointer<UInt8>) -> Int? {
        switch packedLowercase(name) {
        case 0x6A_616E: 1  // jan
        case 0x66_6562: 2  // feb
        case 0x6D_6172: 3  // mar
        case 0x61_7072: 4  // apr
        case 0x6D_6179: 5  // may
        case 0x6A_756E: 6  // jun
        case 0x6A_756C: 7  // jul
        case 0x61_7567: 8  // aug
        case 0x73_6570: 9  // sep
        case 0x6F_6374: 10  // oct
        case 0x6E_6F76: 11  // nov
        case 0x64_6563: 12  // dec
        default: nil
        }
    }

    /// Index of `name` in `table`, comparing ASCII letters case-insensitively.
    private static func index(of name: UnsafeBufferPointer<UInt8>, in table: [[UInt8]]) -> Int? {
        table.firstIndex { entry in
            entry.count == name.count && zip(entry, name).allSatisfy { $0 | 0x20 == $1 | 0x20 }
        }
    }

    /// Whitespace tolerated around the value: OWS (SP, HTAB) plus stray CR/LF from sloppy header folding.
    private static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0D || byte == 0x0A
    }

    /// Forward-only reader over the trimmed bytes. Every accessor is bounds-checked and returns `nil`/`false`
    /// instead of trapping.
    private struct Cursor {
        /// The bytes being parsed.
        let bytes: UnsafeBufferPointer<UInt8>
        /// Offset of the next unread byte.
        var position = 0

        /// Whether every byte has been consumed.
        var isAtEnd: Bool { position == bytes.count }

        /// Consumes `byte` if it is next.
        mutating func consume(_ byte: Unicode.Scalar) -> Bool {
            guard position < bytes.count, bytes[position] == UInt8(ascii: byte) else { return false }
            position += 1
            return true
        }

        /// Consumes exactly `count` ASCII digits; at most 4 are ever requested, so the value cannot overflow.
        mutating func digits(_ count: Int) -> Int? {
            guard bytes.count - position >= count else { return nil }
            var value = 0
            for offset in 0..<count {
                let digit = bytes[position + offset] &- UInt8(ascii: "0")
                guard digit < 10 else { return nil }
                value = value * 10 + Int(digit)
            }
            position += count
            return value
        }

        /// Consumes a (possibly empty) run of ASCII letters.
        mutating func letters() -> UnsafeBufferPointer<UInt8> {
            let start = position
            while position < bytes.count, (bytes[position] | 0x20) &- UInt8(ascii: "a") < 26 { position += 1 }
            return UnsafeBufferPointer(rebasing: bytes[start..<position])
        }

        /// Consumes a three-letter month name and returns its number (1...12).
        mutating func month() -> Int? {
            let name = letters()
            return HTTPDate.monthNumber(name)
        }
    }
}
