//===- UnitsTest.cpp - Byte sizes -----------------------------------------===//

#include "LMS/Graph/Units.h"

#include "gtest/gtest.h"

using namespace lms;

static uint64_t bytesOf(llvm::StringRef text) {
  llvm::Expected<ByteSize> size = parseByteSize(text);
  EXPECT_TRUE(static_cast<bool>(size)) << text.str();
  if (!size) {
    llvm::consumeError(size.takeError());
    return 0;
  }
  EXPECT_FALSE(size->isPercent);
  return size->bytes;
}

static std::string errorOf(llvm::StringRef text) {
  llvm::Expected<ByteSize> size = parseByteSize(text);
  if (size)
    return "";
  return llvm::toString(size.takeError());
}

TEST(UnitsTest, ParsesBytesAndUnits) {
  EXPECT_EQ(bytesOf("123"), 123u);
  EXPECT_EQ(bytesOf("123B"), 123u);
  EXPECT_EQ(bytesOf("2KB"), 2000u);
  EXPECT_EQ(bytesOf("2KiB"), 2048u);
  EXPECT_EQ(bytesOf("3MB"), 3000000u);
  EXPECT_EQ(bytesOf("3MiB"), 3u << 20);
  EXPECT_EQ(bytesOf("12GiB"), 12ull << 30);
  EXPECT_EQ(bytesOf("12 GB"), 12000000000ull);
  EXPECT_EQ(bytesOf("1.5GiB"), 3ull << 29);
  EXPECT_EQ(bytesOf("1TiB"), 1ull << 40);
}

TEST(UnitsTest, ParsesPercentages) {
  llvm::Expected<ByteSize> size = parseByteSize("60%");
  ASSERT_TRUE(static_cast<bool>(size));
  EXPECT_TRUE(size->isPercent);
  EXPECT_EQ(size->resolve(1000), 600u);
  EXPECT_EQ(size->resolve(999), 599u);
  ByteSize plain;
  plain.bytes = 42;
  EXPECT_EQ(plain.resolve(1000), 42u);
}

TEST(UnitsTest, ErrorsNameTheBadText) {
  EXPECT_NE(errorOf("12 potatoes").find("invalid size '12 potatoes'"),
            std::string::npos);
  EXPECT_NE(errorOf("12 potatoes").find("unknown unit 'potatoes'"),
            std::string::npos);
  EXPECT_NE(errorOf("GiB").find("expected a number"), std::string::npos);
  EXPECT_NE(errorOf("").find("expected a number of bytes"), std::string::npos);
  EXPECT_NE(errorOf("0%").find("(0, 100]"), std::string::npos);
  EXPECT_NE(errorOf("150%").find("(0, 100]"), std::string::npos);
  EXPECT_NE(errorOf("1.5B").find("whole number"), std::string::npos);
  EXPECT_NE(errorOf("-5MB").find("expected a number"), std::string::npos);
  EXPECT_NE(errorOf("12gib").find("unknown unit"), std::string::npos);
}

TEST(UnitsTest, Formats) {
  EXPECT_EQ(formatBytes(0), "0 B");
  EXPECT_EQ(formatBytes(1023), "1023 B");
  EXPECT_EQ(formatBytes(1536), "1.50 KiB");
  EXPECT_EQ(formatBytes(12ull << 30), "12.0 GiB");
  EXPECT_EQ(formatBytes(300ull << 20), "300 MiB");
  EXPECT_EQ(formatSeconds(0.0012), "1.20 ms");
  EXPECT_EQ(formatSeconds(35e-6), "35.0 us");
  EXPECT_EQ(formatSeconds(2), "2.00 s");
}
