import TabBarCore
